package deploy

import "k8s.io/apimachinery/pkg/api/resource"

func ptr[T any](v T) *T { return &v }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
