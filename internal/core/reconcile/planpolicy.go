package reconcile

import "context"

// PlanWithPolicy is Plan that asks d.Policy first, as a pass does, so the
// plan is what the adopter's rules and the reconciler would do together
// (an operator's verdict on a campaign's send task). The Policy's own
// item writes are not the plan's to stop: give one whose writes are
// recorded, not made. Without a Policy it is Plan.
func PlanWithPolicy(ctx context.Context, cfg Config, d Deps) (PlanResult, error) {
	return planPass(ctx, cfg, d)
}
