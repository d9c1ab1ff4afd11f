package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Operator is what the command runs: a World on a deployed stack, or a
// Remote on make dev's in-process world. Both give the same reports.
type Operator interface {
	Why(ctx context.Context, table, key string) (WhyReport, error)
	Drift(ctx context.Context, table, key string) ([]DriftReport, error)
	Repair(ctx context.Context, table, key string) ([]DriftReport, error)
	DeadLetters(ctx context.Context, max int) ([]Letter, error)
	Redrive(ctx context.Context, dryRun bool, max int) ([]Redriven, error)
}

var _ Operator = (*World)(nil)

// Prefix is where Handler serves, on make dev's server.
const Prefix = "/__dev/ops/"

// The routes under Prefix.
const (
	routeWhy     = "why"
	routeDrift   = "drift"
	routeRepair  = "repair"
	routeDLQ     = "dlq"
	routeRedrive = "redrive"
)

// Handler serves an Operator's reports as JSON under Prefix: GET why,
// drift and dlq; POST repair and redrive. Query parameters: table, key,
// max, dry-run. A bad request is a 400 {"error": ...}.
func Handler(o Operator) http.Handler {
	mux := http.NewServeMux()
	serve := func(method, route string, do func(r *http.Request) (any, error)) {
		mux.HandleFunc(method+" "+Prefix+route, func(w http.ResponseWriter, r *http.Request) {
			v, err := do(r)
			w.Header().Set("Content-Type", "application/json")
			if err != nil {
				status := http.StatusInternalServerError
				if errors.Is(err, ErrUsage) {
					status = http.StatusBadRequest
				}
				w.WriteHeader(status)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
				return
			}
			_ = json.NewEncoder(w).Encode(v)
		})
	}
	q := func(r *http.Request, name string) string { return r.URL.Query().Get(name) }
	maxOf := func(r *http.Request) (int, error) {
		if v := q(r, "max"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("%w: max must be a whole number above 0 (given %q)", ErrUsage, v)
			}
			return n, nil
		}
		return 1000, nil
	}
	serve(http.MethodGet, routeWhy, func(r *http.Request) (any, error) { return o.Why(r.Context(), q(r, "table"), q(r, "key")) })
	serve(http.MethodGet, routeDrift, func(r *http.Request) (any, error) { return o.Drift(r.Context(), q(r, "table"), q(r, "key")) })
	serve(http.MethodPost, routeRepair, func(r *http.Request) (any, error) { return o.Repair(r.Context(), q(r, "table"), q(r, "key")) })
	serve(http.MethodGet, routeDLQ, func(r *http.Request) (any, error) {
		n, err := maxOf(r)
		if err != nil {
			return nil, err
		}
		return o.DeadLetters(r.Context(), n)
	})
	serve(http.MethodPost, routeRedrive, func(r *http.Request) (any, error) {
		n, err := maxOf(r)
		if err != nil {
			return nil, err
		}
		return o.Redrive(r.Context(), q(r, "dry-run") == "true", n)
	})
	return mux
}

// Remote is an Operator on a Handler at base (make dev's server).
type Remote struct {
	base   string
	client *http.Client
}

var _ Operator = (*Remote)(nil)

// NewRemote returns the Operator served at base, e.g. http://127.0.0.1:8080.
func NewRemote(base string, c *http.Client) *Remote {
	if c == nil {
		c = http.DefaultClient
	}
	return &Remote{base: strings.TrimSuffix(base, "/"), client: c}
}

func (r *Remote) call(ctx context.Context, method, route string, params url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, r.base+Prefix+route+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("the dev server at %s: %w", r.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode == http.StatusBadRequest {
			return fmt.Errorf("%w: %s", ErrUsage, strings.TrimPrefix(e.Error, "usage: "))
		}
		return fmt.Errorf("the dev server: %s: %s", resp.Status, e.Error)
	}
	return json.Unmarshal(body, out)
}

// Why implements Operator.
func (r *Remote) Why(ctx context.Context, table, key string) (WhyReport, error) {
	var out WhyReport
	return out, r.call(ctx, http.MethodGet, routeWhy, url.Values{"table": {table}, "key": {key}}, &out)
}

// Drift implements Operator.
func (r *Remote) Drift(ctx context.Context, table, key string) ([]DriftReport, error) {
	var out []DriftReport
	return out, r.call(ctx, http.MethodGet, routeDrift, url.Values{"table": {table}, "key": {key}}, &out)
}

// Repair implements Operator.
func (r *Remote) Repair(ctx context.Context, table, key string) ([]DriftReport, error) {
	var out []DriftReport
	return out, r.call(ctx, http.MethodPost, routeRepair, url.Values{"table": {table}, "key": {key}}, &out)
}

// DeadLetters implements Operator.
func (r *Remote) DeadLetters(ctx context.Context, max int) ([]Letter, error) {
	var out []Letter
	return out, r.call(ctx, http.MethodGet, routeDLQ, url.Values{"max": {strconv.Itoa(max)}}, &out)
}

// Redrive implements Operator.
func (r *Remote) Redrive(ctx context.Context, dryRun bool, max int) ([]Redriven, error) {
	var out []Redriven
	return out, r.call(ctx, http.MethodPost, routeRedrive, url.Values{"max": {strconv.Itoa(max)}, "dry-run": {strconv.FormatBool(dryRun)}}, &out)
}
