package webhook

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodAccess says whether the writer of an admission may list the Pods of a
// namespace: the Service findings name Pods, their labels and ports only to
// such a writer, since a server-side dry run would otherwise read them to
// anyone who may create a Service.
type PodAccess interface {
	MayListPods(ctx context.Context, user authenticationv1.UserInfo, namespace string) bool
}

// Defaults of AccessCache: a granted right is trusted for 30 s, a refused
// one (or a failed review) for 10 s, so that a right just granted shows
// soon; bounded so that many users cannot grow the webhook's memory.
const (
	DefaultAllowedTTL = 30 * time.Second
	DefaultDeniedTTL  = 10 * time.Second
	DefaultMaxUsers   = 4096
	// reviewTimeout bounds a review within the Services webhook's 3 s.
	reviewTimeout = time.Second
	// DefaultReviewRate and DefaultReviewBurst bound the reviews of all
	// users together: one a second, after a burst of three.
	DefaultReviewRate  = rate.Limit(1)
	DefaultReviewBurst = 3
)

// Reviewer is the SubjectAccessReview create call (client-go's
// AuthorizationV1().SubjectAccessReviews().Create).
type Reviewer func(ctx context.Context, r *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)

// AccessCache answers PodAccess with a SubjectAccessReview for `list pods`
// in the namespace, remembered per user (name, UID, groups and extra, all
// of which an authorizer may look at) and namespace. In the steady state an
// admission costs no API request; a miss costs one review (a round trip to
// the API server, about a millisecond on loopback) and happens at most once
// per TTL per user and namespace, and only for a Service whose findings
// hold Pod data. A review that fails counts as refused: the data stays
// hidden (fail closed). Misses are reviewed at most at Limit's rate, all
// users together, whatever the admissions ask: many users and namespaces
// (or a caller inventing them) cannot make the webhook an amplifier of
// requests to the API server. A miss past the rate is answered refused and
// not remembered, so the next admission asks again.
type AccessCache struct {
	Review                Reviewer
	AllowedTTL, DeniedTTL time.Duration
	Max                   int
	// Limit bounds the reviews made; nil leaves them unbounded.
	Limit *rate.Limiter
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	reviews, limited atomic.Int64

	mu      sync.Mutex
	entries map[string]accessEntry
}

type accessEntry struct {
	allowed bool
	expires time.Time
}

// NewAccessCache returns a cache with the default TTLs and bound.
func NewAccessCache(review Reviewer) *AccessCache {
	return &AccessCache{Review: review, AllowedTTL: DefaultAllowedTTL, DeniedTTL: DefaultDeniedTTL, Max: DefaultMaxUsers,
		Limit: rate.NewLimiter(DefaultReviewRate, DefaultReviewBurst)}
}

// Reviews is the number of SubjectAccessReviews made (the cache's misses).
func (c *AccessCache) Reviews() int64 { return c.reviews.Load() }

// Limited is the number of misses not reviewed for the rate limit.
func (c *AccessCache) Limited() int64 { return c.limited.Load() }

// MayListPods implements PodAccess.
func (c *AccessCache) MayListPods(ctx context.Context, u authenticationv1.UserInfo, ns string) bool {
	key := accessKey(u, ns)
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.allowed
	}
	if c.Limit != nil && !c.Limit.AllowN(now, 1) {
		c.limited.Add(1)
		return false
	}
	allowed := c.review(ctx, u, ns)
	ttl := c.DeniedTTL
	if allowed {
		ttl = c.AllowedTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]accessEntry{}
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= max(c.Max, 1) {
		c.evict(now)
	}
	c.entries[key] = accessEntry{allowed: allowed, expires: now.Add(ttl)}
	return allowed
}

func (c *AccessCache) review(ctx context.Context, u authenticationv1.UserInfo, ns string) bool {
	if c.Review == nil {
		return false
	}
	c.reviews.Add(1)
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Version: "v1", Resource: "pods"},
	}}
	if len(u.Extra) > 0 {
		sar.Spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			sar.Spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	out, err := c.Review(ctx, sar, metav1.CreateOptions{})
	return err == nil && out != nil && out.Status.Allowed && !out.Status.Denied
}

// evict makes room for one entry: the expired ones go, or else the one
// closest to expiring. Called with mu held, on a miss only.
func (c *AccessCache) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
			continue
		}
		if oldest == "" || e.expires.Before(at) {
			oldest, at = k, e.expires
		}
	}
	if len(c.entries) >= max(c.Max, 1) {
		delete(c.entries, oldest)
	}
}

func (c *AccessCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// accessKey is everything of the user an authorizer may decide by, and the
// namespace; groups and extra values are sorted copies (the input is not
// modified), so that their order does not split the cache.
func accessKey(u authenticationv1.UserInfo, ns string) string {
	// Each part is length-prefixed: no name can pass for two.
	var b strings.Builder
	put := func(tag byte, s string) {
		b.WriteByte(tag)
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put('n', ns)
	put('u', u.Username)
	put('i', u.UID)
	groups := append([]string(nil), u.Groups...)
	sort.Strings(groups)
	for _, g := range groups {
		put('g', g)
	}
	keys := make([]string, 0, len(u.Extra))
	for k := range u.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		put('k', k)
		vals := append([]string(nil), u.Extra[k]...)
		sort.Strings(vals)
		for _, v := range vals {
			put('v', v)
		}
	}
	return b.String()
}
