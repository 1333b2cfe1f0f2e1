package webhook

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeAuthorizer answers reviews from a table of "user@namespace" and
// counts them; fail makes every review fail.
type fakeAuthorizer struct {
	allowed map[string]bool
	fail    bool
	calls   []authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeAuthorizer) review(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.calls = append(f.calls, r.Spec)
	if f.fail {
		return nil, errors.New("connection refused")
	}
	a := r.Spec.ResourceAttributes
	out := r.DeepCopy()
	out.Status.Allowed = a != nil && a.Verb == "list" && a.Resource == "pods" && a.Group == "" && f.allowed[r.Spec.User+"@"+a.Namespace]
	return out, nil
}

func TestAccessCache(t *testing.T) {
	auth := &fakeAuthorizer{allowed: map[string]bool{"alice@shop": true}}
	now := time.Unix(1000, 0)
	c := NewAccessCache(auth.review)
	c.Now = func() time.Time { return now }
	c.Limit = nil // the rate limit has its own test
	ctx := context.Background()
	alice := authenticationv1.UserInfo{Username: "alice", UID: "a1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"x"}}}
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"system:authenticated"}}

	if !c.MayListPods(ctx, alice, "shop") || c.MayListPods(ctx, alice, "bank") || c.MayListPods(ctx, bob, "shop") {
		t.Fatal("answers differ from the authorizer's")
	}
	if len(auth.calls) != 3 {
		t.Fatalf("%d reviews for three users and namespaces", len(auth.calls))
	}
	spec := auth.calls[0]
	if spec.User != "alice" || spec.UID != "a1" || len(spec.Groups) != 2 || spec.Extra["scopes"][0] != "x" ||
		spec.ResourceAttributes.Namespace != "shop" || spec.ResourceAttributes.Version != "v1" {
		t.Fatalf("review spec %+v", spec)
	}
	// The steady state: no review; group order does not split the cache.
	reordered := alice
	reordered.Groups = []string{"system:authenticated", "dev"}
	for range 100 {
		if !c.MayListPods(ctx, reordered, "shop") || c.MayListPods(ctx, bob, "shop") {
			t.Fatal("cached answers changed")
		}
	}
	if len(auth.calls) != 3 || c.Reviews() != 3 {
		t.Fatalf("%d reviews (counted %d) after 200 cached answers, want 3", len(auth.calls), c.Reviews())
	}
	if alice.Groups[0] != "dev" || reordered.Groups[0] != "system:authenticated" {
		t.Fatal("the user's groups were modified")
	}
	// Another group is another identity to the authorizer.
	c.MayListPods(ctx, authenticationv1.UserInfo{Username: "alice", UID: "a1", Groups: []string{"dev"}}, "shop")
	if len(auth.calls) != 4 {
		t.Fatalf("a different group set was answered from the cache")
	}

	// A refusal expires sooner than a grant: a right just granted shows
	// within the negative TTL.
	auth.allowed["bob@shop"] = true
	now = now.Add(DefaultDeniedTTL)
	if !c.MayListPods(ctx, bob, "shop") {
		t.Fatal("bob's new right not seen after the negative TTL")
	}
	auth.allowed["alice@shop"] = false
	if !c.MayListPods(ctx, alice, "shop") {
		t.Fatal("alice's grant expired before the positive TTL")
	}
	now = now.Add(DefaultAllowedTTL)
	if c.MayListPods(ctx, alice, "shop") {
		t.Fatal("alice's revoked right still granted after the positive TTL")
	}

	// A failed review hides the data (fail closed), and is remembered
	// briefly rather than retried on every admission.
	auth.fail = true
	carol := authenticationv1.UserInfo{Username: "carol"}
	auth.allowed["carol@shop"] = true
	n := len(auth.calls)
	if c.MayListPods(ctx, carol, "shop") || c.MayListPods(ctx, carol, "shop") {
		t.Fatal("a failed review granted the right")
	}
	if len(auth.calls) != n+1 {
		t.Fatalf("%d reviews for one failing user", len(auth.calls)-n)
	}
}

func TestAccessCacheBounded(t *testing.T) {
	auth := &fakeAuthorizer{allowed: map[string]bool{}}
	now := time.Unix(1000, 0)
	c := NewAccessCache(auth.review)
	c.Max = 10
	c.Now = func() time.Time { return now }
	c.Limit = nil
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		c.MayListPods(context.Background(), authenticationv1.UserInfo{Username: fmt.Sprint("u", i)}, "ns")
		if len(c.entries) > c.Max {
			t.Fatalf("%d entries, bound %d", len(c.entries), c.Max)
		}
	}
	// The most recent users are still cached.
	n := len(auth.calls)
	c.MayListPods(context.Background(), authenticationv1.UserInfo{Username: "u999"}, "ns")
	if len(auth.calls) != n {
		t.Fatal("the latest entry was evicted")
	}
}

func TestAccessKey(t *testing.T) {
	// Names that would run together without length prefixes stay apart.
	a := accessKey(authenticationv1.UserInfo{Username: "a", Groups: []string{"bc"}}, "ns")
	b := accessKey(authenticationv1.UserInfo{Username: "ab", Groups: []string{"c"}}, "ns")
	c := accessKey(authenticationv1.UserInfo{Username: "a", Groups: []string{"b", "c"}}, "ns")
	if a == b || a == c || b == c {
		t.Fatalf("keys collide: %q %q %q", a, b, c)
	}
}

// Reviews are bounded for all users together, whatever the admissions
// ask: 150 users (as a caller inventing them would send) within a second
// cost the burst, then one a second; a miss past the rate is refused and
// not remembered, so the user is reviewed once the rate allows.
func TestAccessCacheRateLimit(t *testing.T) {
	auth := &fakeAuthorizer{allowed: map[string]bool{}}
	now := time.Unix(1000, 0)
	c := NewAccessCache(auth.review)
	c.Now = func() time.Time { return now }
	for i := range 150 {
		auth.allowed[fmt.Sprint("u", i, "@ns")] = true
	}
	granted := 0
	for i := range 150 {
		now = now.Add(5 * time.Millisecond) // 150 in 0.75 s
		if c.MayListPods(context.Background(), authenticationv1.UserInfo{Username: fmt.Sprint("u", i)}, "ns") {
			granted++
		}
	}
	if len(auth.calls) != DefaultReviewBurst || granted != DefaultReviewBurst || c.Limited() != int64(150-DefaultReviewBurst) {
		t.Fatalf("%d reviews, %d granted, %d limited in 0.75 s; want the burst of %d", len(auth.calls), granted, c.Limited(), DefaultReviewBurst)
	}
	// A refused miss was not remembered: u149 is asked once the rate
	// allows, and its grant is.
	now = now.Add(time.Second)
	u := authenticationv1.UserInfo{Username: "u149"}
	if !c.MayListPods(context.Background(), u, "ns") || !c.MayListPods(context.Background(), u, "ns") {
		t.Fatal("u149 not granted after the rate allowed a review")
	}
	if len(auth.calls) != DefaultReviewBurst+1 {
		t.Fatalf("%d reviews, want %d", len(auth.calls), DefaultReviewBurst+1)
	}
	// Over a minute of misses every 10 ms, about one review a second.
	before := len(auth.calls)
	for i := range 6000 {
		now = now.Add(10 * time.Millisecond)
		c.MayListPods(context.Background(), authenticationv1.UserInfo{Username: fmt.Sprint("v", i)}, "ns")
	}
	if n := len(auth.calls) - before; n > 60+DefaultReviewBurst {
		t.Fatalf("%d reviews in 60 s", n)
	}
}
