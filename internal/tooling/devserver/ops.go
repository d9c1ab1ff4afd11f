package devserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/pipeline"
)

// OpsTable is the in-process world's task table, as the operator's
// command names it (unschedule --dev ...).
const OpsTable = "tasks"

// opsRoutes serves the operator's command (unschedule --dev URL) on the
// in-process world under ops.Prefix, by the same code as on a deployed
// stack. Like an operator's AWS credentials, the routes reach every
// user's items with no sign-in: they are not served with AllowedHosts.
func (s *Server) opsRoutes(mux *http.ServeMux) {
	if len(s.cfg.AllowedHosts) > 0 {
		return
	}
	w := &ops.World{
		Stack: ops.Stack{Name: "dev", Tables: []ops.Table{{Name: OpsTable, Schema: task.Schema, HasTimer: true,
			TimerName: "in-process", Reconciler: "in-process", Functions: []string{"in-process"}}}},
		Backend: devOps{s},
		Now:     wallClock{s}.Now,
		Log:     s.log,
	}
	h := ops.Handler(w)
	// Each operation runs between two steps of the world, and what a
	// repair changed is saved (the world has no failure queues:
	// DeadLetters and Redrive find none).
	mux.HandleFunc(ops.Prefix, func(rw http.ResponseWriter, r *http.Request) {
		s.stepMu.Lock()
		h.ServeHTTP(rw, r)
		s.stepMu.Unlock()
		if r.Method == http.MethodPost {
			if err := s.persist(); err != nil {
				s.log.Error("saving after an operation failed", "error", err.Error())
			}
		}
	})
}

// devOps is the in-process world as an ops.Backend.
type devOps struct{ s *Server }

func (d devOps) Item(_ context.Context, _ ops.Table, k contract.Key) (map[string]string, bool, error) {
	t, err := d.s.pipe.Store.Get(context.Background(), k.Partition, k.Sort)
	if errors.Is(err, task.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return tableschema.ToItem(t), true, nil
}

// Reconciler is the dev server's own reconciler's wiring.
func (d devOps) Reconciler(ops.Table) (reconcile.Config, reconcile.Deps, error) {
	return reconcile.Config{}, d.s.reconcileDeps(), nil
}

func (devOps) Lease(ops.Table) time.Duration { return fire.DefaultLease }

// Pipeline is the in-process world behind the server, for the tests and
// tools that drive it (the operator runbook's test breaks a schedule in
// it, as a lost one in AWS).
func (s *Server) Pipeline() *pipeline.Pipeline { return s.pipe }
