package campaign

import (
	"testing"
	"time"
)

func TestTaskSchemaIsValid(t *testing.T) {
	if err := TaskSchema.Validate(); err != nil {
		t.Fatal(err)
	}
	k := Key{CampaignID: "c1", TaskID: "c1-00007"}
	if got, err := KeyOf(ItemKey(k)); err != nil || got != k {
		t.Fatalf("KeyOf(ItemKey(%v)) = %v, %v", k, got, err)
	}
	if _, err := KeyOf(ItemKey(Key{})); err == nil {
		t.Fatal("empty key accepted")
	}
}

// TestClaimAndTakeOverFollowTheContract: the claim needs Pending at the
// same send time; the take-over a Running, unsent claim for that time at
// least a lease old.
func TestClaimAndTakeOverFollowTheContract(t *testing.T) {
	due := now
	p := SendTask{ID: "c-00000", CampaignID: "c", State: Pending, SendAt: due}
	if _, err := Claim(p, due.Add(time.Minute), due, time.Minute); err == nil {
		t.Fatal("claimed for another send time")
	}
	c, err := Claim(p, due, due.Add(1500*time.Millisecond), time.Minute)
	if err != nil || c.State != Running || c.Attempt != 1 || !c.ClaimedAt.Equal(due.Add(time.Second)) {
		t.Fatalf("Claim = %+v, %v", c, err)
	}
	if _, err := Claim(c, due, due, time.Minute); err == nil {
		t.Fatal("claimed twice")
	}
	if _, err := TakeOver(c, due, c.ClaimedAt.Add(59*time.Second), time.Minute); err == nil {
		t.Fatal("taken over within the lease")
	}
	o, err := TakeOver(c, due, c.ClaimedAt.Add(time.Minute), time.Minute)
	if err != nil || o.Attempt != 2 || !o.ClaimedAt.Equal(c.ClaimedAt.Add(time.Minute)) {
		t.Fatalf("TakeOver = %+v, %v", o, err)
	}
	sent, _ := Finish(o, due, "m", due)
	if _, err := TakeOver(sent, due, due.Add(time.Hour), time.Minute); err == nil {
		t.Fatal("a sent task taken over")
	}
}
