// Package analytics is the barbershop example's computation:
// when a shop's weekly window closes, its figures over the last 7, 30, 60
// and 90 days. It runs only for shops that had activity (a marker).
package analytics

import (
	"sort"
	"time"
)

// Periods are the look-back windows, in days.
var Periods = []int{7, 30, 60, 90}

// Appointment is one booked appointment.
type Appointment struct {
	At         time.Time `json:"at"`
	Barber     string    `json:"barber"`
	PriceCents int64     `json:"priceCents"`
	CustomerID string    `json:"customerId"`
	NoShow     bool      `json:"noShow"`
}

// Figures of one period.
type Figures struct {
	Days            int     `json:"days"`
	Appointments    int     `json:"appointments"`
	NoShows         int     `json:"noShows"`
	RevenueCents    int64   `json:"revenueCents"`
	UniqueCustomers int     `json:"uniqueCustomers"`
	AvgTicketCents  int64   `json:"avgTicketCents"`
	BusiestBarber   string  `json:"busiestBarber,omitempty"`
	NoShowRate      float64 `json:"noShowRate"`
}

// Report is a shop's figures at the end of a window.
type Report struct {
	Shop    string    `json:"shop"`
	AsOf    time.Time `json:"asOf"`
	Periods []Figures `json:"periods"`
}

// Compute is shop's report as of asOf (exclusive) from its appointments
// (any order; those outside 90 days or at/after asOf are ignored). Each
// period covers [asOf - days, asOf). A no-show earns nothing.
func Compute(shop string, asOf time.Time, appts []Appointment) Report {
	r := Report{Shop: shop, AsOf: asOf.UTC()}
	for _, days := range Periods {
		from := asOf.AddDate(0, 0, -days)
		f := Figures{Days: days}
		customers := map[string]bool{}
		perBarber := map[string]int{}
		for _, a := range appts {
			if a.At.Before(from) || !a.At.Before(asOf) {
				continue
			}
			f.Appointments++
			if a.NoShow {
				f.NoShows++
				continue
			}
			f.RevenueCents += a.PriceCents
			customers[a.CustomerID] = true
			perBarber[a.Barber]++
		}
		f.UniqueCustomers = len(customers)
		if served := f.Appointments - f.NoShows; served > 0 {
			f.AvgTicketCents = f.RevenueCents / int64(served)
		}
		if f.Appointments > 0 {
			f.NoShowRate = float64(f.NoShows) / float64(f.Appointments)
		}
		f.BusiestBarber = busiest(perBarber)
		r.Periods = append(r.Periods, f)
	}
	return r
}

// busiest is the barber with most served appointments (ties: the first
// by name, so the result does not depend on map order).
func busiest(m map[string]int) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	best := ""
	for _, n := range names {
		if best == "" || m[n] > m[best] {
			best = n
		}
	}
	return best
}
