package bench

import (
	"fmt"
	"strings"
)

// LoadAverage is /proc/loadavg's load over 1, 5 and 15 minutes (Read
// false when it could not be read).
type LoadAverage struct {
	One, Five, Fifteen float64
	Read               bool
}

// ParseLoadAvg reads the first three fields of /proc/loadavg.
func ParseLoadAvg(b []byte) (LoadAverage, error) {
	l := LoadAverage{Read: true}
	if _, err := fmt.Sscan(string(b), &l.One, &l.Five, &l.Fifteen); err != nil {
		return LoadAverage{}, fmt.Errorf("loadavg: want three numbers, got %q: %w", strings.TrimSpace(string(b)), err)
	}
	return l, nil
}

func (l LoadAverage) String() string {
	if !l.Read {
		return "not read"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l.One, l.Five, l.Fifteen)
}

// Busy thresholds, 1-minute load per CPU: at the end the figure includes
// the bench's own last minute (one busy core), so it is higher.
const (
	BusyStartPerCPU = 0.5
	BusyEndPerCPU   = 1.0
)

// LoadWarnings says when the machine was busy at the start or at the end
// of the run (nil when it was not, or the load was not read).
func (m Machine) LoadWarnings() []string {
	cpus := float64(m.NumCPU)
	if cpus < 1 {
		cpus = 1
	}
	var w []string
	if m.LoadStart.Read && m.LoadStart.One > BusyStartPerCPU*cpus {
		w = append(w, fmt.Sprintf("the machine was busy at the start: 1-minute load %.2f on %d CPUs (above %.1f per CPU); "+
			"other work shared the CPUs, so absolute times are inflated: run it again on an idle machine", m.LoadStart.One, m.NumCPU, BusyStartPerCPU))
	}
	if m.LoadEnd.Read && m.LoadEnd.One > BusyEndPerCPU*cpus {
		w = append(w, fmt.Sprintf("the machine was busy at the end: 1-minute load %.2f on %d CPUs (above %.1f per CPU, which the bench's "+
			"own work does not reach); run it again on an idle machine", m.LoadEnd.One, m.NumCPU, BusyEndPerCPU))
	}
	return w
}
