package compute

import "context"

type slowdownKey struct{}

// WithSlowdown returns ctx asking a driver to take factor times its usual durations
// for the calls made with it (a sandbox's slow operation fault). Only the simulated
// driver, whose durations are its own, follows it; a real driver ignores it.
func WithSlowdown(ctx context.Context, factor float64) context.Context {
	return context.WithValue(ctx, slowdownKey{}, factor)
}

// Slowdown is the factor WithSlowdown put in ctx; 1 when none.
func Slowdown(ctx context.Context) float64 {
	if f, ok := ctx.Value(slowdownKey{}).(float64); ok && f > 0 {
		return f
	}
	return 1
}
