package memory

import (
	"context"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

// CampaignSenders is the sender group in memory (campaign.SenderCheck):
// the owners added are senders until removed; anyone else is refused as
// the user pool adapter refuses a user outside the group. Calls counts
// the checks; Fault, when set, fails a check before it is answered.
type CampaignSenders struct {
	mu      sync.Mutex
	senders map[string]bool
	Calls   int
	Fault   func(owner string) error
}

var _ campaign.SenderCheck = (*CampaignSenders)(nil)

// NewCampaignSenders returns a group holding owners.
func NewCampaignSenders(owners ...string) *CampaignSenders {
	s := &CampaignSenders{senders: map[string]bool{}}
	for _, o := range owners {
		s.senders[o] = true
	}
	return s
}

// Add makes owner a sender.
func (s *CampaignSenders) Add(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.senders[owner] = true
}

// Remove takes the right away, as admin-remove-user-from-group does.
func (s *CampaignSenders) Remove(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.senders, owner)
}

// Check implements campaign.SenderCheck.
func (s *CampaignSenders) Check(_ context.Context, owner string) (campaign.Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls++
	if s.Fault != nil {
		if err := s.Fault(owner); err != nil {
			return campaign.Verdict{}, err
		}
	}
	if !s.senders[owner] {
		return campaign.Refuse("not in the sender group"), nil
	}
	return campaign.Allow(), nil
}
