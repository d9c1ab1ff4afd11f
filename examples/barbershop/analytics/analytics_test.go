package analytics

import (
	"testing"
	"time"
)

func TestCompute(t *testing.T) {
	asOf := time.Date(2027, 3, 8, 3, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return asOf.AddDate(0, 0, -d) }
	appts := []Appointment{
		{At: day(1), Barber: "bo", PriceCents: 3000, CustomerID: "c1"},
		{At: day(7), Barber: "al", PriceCents: 2000, CustomerID: "c2"},                   // exactly 7 days: inside [asOf-7d, asOf)
		{At: day(7).Add(-time.Second), Barber: "al", PriceCents: 2500, CustomerID: "c1"}, // just outside 7 days
		{At: day(20), Barber: "al", CustomerID: "c3", NoShow: true, PriceCents: 9999},
		{At: day(59), Barber: "bo", PriceCents: 1000, CustomerID: "c4"},
		{At: day(90), Barber: "cy", PriceCents: 4000, CustomerID: "c5"},
		{At: day(91), Barber: "cy", PriceCents: 4000, CustomerID: "c6"}, // older than 90 days
		{At: asOf, Barber: "bo", PriceCents: 7000, CustomerID: "c7"},    // at asOf: the next window's
	}
	want := []Figures{
		{Days: 7, Appointments: 2, RevenueCents: 5000, UniqueCustomers: 2, AvgTicketCents: 2500, BusiestBarber: "al"},
		{Days: 30, Appointments: 4, NoShows: 1, RevenueCents: 7500, UniqueCustomers: 2, AvgTicketCents: 2500, BusiestBarber: "al", NoShowRate: 0.25},
		{Days: 60, Appointments: 5, NoShows: 1, RevenueCents: 8500, UniqueCustomers: 3, AvgTicketCents: 2125, BusiestBarber: "al", NoShowRate: 0.2},
		{Days: 90, Appointments: 6, NoShows: 1, RevenueCents: 12500, UniqueCustomers: 4, AvgTicketCents: 2500, BusiestBarber: "al", NoShowRate: 1.0 / 6},
	}
	got := Compute("shop-1", asOf, appts)
	if got.Shop != "shop-1" || !got.AsOf.Equal(asOf) || len(got.Periods) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got.Periods[i] != want[i] {
			t.Errorf("period %d: got %+v, want %+v", want[i].Days, got.Periods[i], want[i])
		}
	}
}

func TestComputeEmptyAndTies(t *testing.T) {
	asOf := time.Date(2027, 3, 8, 3, 0, 0, 0, time.UTC)
	for _, f := range Compute("s", asOf, nil).Periods {
		if f != (Figures{Days: f.Days}) {
			t.Fatalf("no appointments: %+v", f)
		}
	}
	tie := []Appointment{{At: asOf.Add(-time.Hour), Barber: "zed"}, {At: asOf.Add(-time.Hour), Barber: "amy"}}
	for i := 0; i < 20; i++ { // map order must not matter
		if b := Compute("s", asOf, tie).Periods[0].BusiestBarber; b != "amy" {
			t.Fatalf("tie gave %q", b)
		}
	}
}
