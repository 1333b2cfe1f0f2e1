package upstreamdiff

import "reflect"

func equalObjects(a, b any) bool { return reflect.DeepEqual(a, b) }
