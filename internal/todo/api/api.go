// Package api maps REST requests onto the task use cases. It knows nothing
// of API Gateway or net/http: the Lambda main and the local dev server each
// translate their request into a Request and write back the Response.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Routes this package serves (API Gateway resource paths).
const (
	RouteTasks = "/tasks"
	RouteTask  = "/tasks/{id}"
)

// Request and Response are the core's (internal/core/httpapi), which the
// campaign API serves too; the route's {id} (Request.ID) is a task id.
type (
	Request  = httpapi.Request
	Response = httpapi.Response
)

// Tasks is what the handler needs of the lifecycle (task.Service).
type Tasks interface {
	Now() time.Time
	Create(ctx context.Context, userID string, in task.NewTask) (task.Task, error)
	Get(ctx context.Context, userID, taskID string) (task.Task, error)
	List(ctx context.Context, userID string, page task.PageRequest) (task.Page, error)
	Update(ctx context.Context, userID, taskID string, p task.Patch) (task.Task, error)
	Delete(ctx context.Context, userID, taskID string) error
}

var _ Tasks = (*task.Service)(nil)

// Handler serves the task API.
type Handler struct {
	tasks         Tasks
	cursors       *pagecursor.Sealer
	notifications Notifications // nil: RouteNotifications is not served
	origins       []string
	log           *slog.Logger
}

// New returns a handler whose list cursors cursors seals (required: the
// store's positions never reach a client bare). A request whose Origin is
// one of allowedOrigins gets it back in Access-Control-Allow-Origin; any
// other request gets the first allowed origin, which a browser will
// refuse for another site.
func New(tasks Tasks, cursors *pagecursor.Sealer, allowedOrigins []string, log *slog.Logger) *Handler {
	if cursors == nil {
		panic("api: New needs a cursor sealer")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Handler{tasks: tasks, cursors: cursors, origins: allowedOrigins, log: log}
}

// Serve handles one request. It never panics on client input and never
// answers a client mistake with a 5xx.
func (h *Handler) Serve(ctx context.Context, r Request) Response {
	return httpapi.CORS(h.route(ctx, r), h.origins, r.Origin)
}

func (h *Handler) route(ctx context.Context, r Request) Response {
	if r.UserID == "" {
		return httpapi.Error(http.StatusUnauthorized, "unauthorized", "sign in first: the request carries no identity")
	}
	switch {
	case r.Route == RouteTasks && r.Method == http.MethodPost:
		return h.create(ctx, r)
	case r.Route == RouteTasks && r.Method == http.MethodGet:
		return h.list(ctx, r)
	case r.Route == RouteTask && r.Method == http.MethodGet:
		t, err := h.tasks.Get(ctx, r.UserID, r.ID)
		if err != nil {
			return h.mapErr(ctx, err)
		}
		return httpapi.JSON(http.StatusOK, toJSON(t))
	case r.Route == RouteTask && r.Method == http.MethodPatch:
		return h.patch(ctx, r)
	case r.Route == RouteTask && r.Method == http.MethodDelete:
		if err := h.tasks.Delete(ctx, r.UserID, r.ID); err != nil {
			return h.mapErr(ctx, err)
		}
		return Response{Status: http.StatusNoContent, Headers: httpapi.Headers()}
	case r.Route == RouteNotifications:
		return h.serveNotifications(ctx, r)
	case r.Route == RouteTasks || r.Route == RouteTask:
		return httpapi.Error(http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed here")
	default:
		return httpapi.Error(http.StatusNotFound, "not_found", "no such route")
	}
}

func (h *Handler) create(ctx context.Context, r Request) Response {
	in, err := task.ParseNewTask(r.Body, h.tasks.Now())
	if err != nil {
		return h.mapErr(ctx, err)
	}
	t, err := h.tasks.Create(ctx, r.UserID, in)
	if err != nil {
		return h.mapErr(ctx, err)
	}
	return httpapi.JSON(http.StatusCreated, toJSON(t))
}

func (h *Handler) patch(ctx context.Context, r Request) Response {
	p, err := task.ParsePatch(r.Body, h.tasks.Now())
	if err != nil {
		return h.mapErr(ctx, err)
	}
	t, err := h.tasks.Update(ctx, r.UserID, r.ID, p)
	if err != nil {
		return h.mapErr(ctx, err)
	}
	return httpapi.JSON(http.StatusOK, toJSON(t))
}

func (h *Handler) list(ctx context.Context, r Request) Response {
	// The cursor is sealed for this route and caller: the store's
	// position (a task id) is never shown, and no other list's opens here.
	scope := pagecursor.Scope{Route: RouteTasks, Owner: r.UserID}
	pos, err := h.cursors.Open(ctx, scope, r.Query["cursor"])
	if errors.Is(err, pagecursor.ErrInvalid) {
		return httpapi.Error(http.StatusBadRequest, "validation_error", pagecursor.Problem)
	}
	if err != nil {
		return h.mapErr(ctx, err)
	}
	page := task.PageRequest{Cursor: pos, Limit: task.DefaultPageSize}
	if s, ok := r.Query["limit"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > task.MaxPageSize {
			return httpapi.Error(http.StatusBadRequest, "validation_error",
				"limit must be a whole number from 1 to "+strconv.Itoa(task.MaxPageSize)+" (given "+strconv.Quote(s)+")")
		}
		page.Limit = n
	}
	p, err := h.tasks.List(ctx, r.UserID, page)
	if err != nil {
		return h.mapErr(ctx, err)
	}
	next, err := h.cursors.Seal(ctx, scope, p.Cursor)
	if err != nil {
		return h.mapErr(ctx, err)
	}
	out := listJSON{Tasks: make([]taskJSON, 0, len(p.Tasks)), Cursor: next}
	for _, t := range p.Tasks {
		out.Tasks = append(out.Tasks, toJSON(t))
	}
	return httpapi.JSON(http.StatusOK, out)
}

// mapErr turns a domain error into a response. Internal errors are logged
// and answered with a generic message: their text never reaches the caller.
func (h *Handler) mapErr(ctx context.Context, err error) Response {
	var ve *task.ValidationError
	var tl *task.TooLargeError
	var lim *task.PendingLimitError
	var np *task.NotPendingError
	switch {
	case errors.As(err, &ve):
		return httpapi.Error(http.StatusBadRequest, "validation_error", ve.Msg)
	case errors.As(err, &tl):
		return httpapi.Error(http.StatusRequestEntityTooLarge, "too_large", tl.Error())
	case errors.Is(err, task.ErrNotFound):
		return httpapi.Error(http.StatusNotFound, "not_found", "task not found")
	case errors.As(err, &lim):
		return httpapi.Error(http.StatusTooManyRequests, "too_many_pending", lim.Error())
	case errors.As(err, &np):
		return httpapi.Error(http.StatusConflict, "not_pending",
			"the task is "+np.Status.Lower()+", no longer pending: only a pending task can be edited or completed")
	case errors.Is(err, task.ErrNotPending):
		return httpapi.Error(http.StatusConflict, "not_pending", "the task is no longer pending: only a pending task can be edited or completed")
	case errors.Is(err, task.ErrConditionFailed):
		// Update read the task again several times and it kept changing.
		return httpapi.Error(http.StatusConflict, "conflict", "the task was changed at the same time by another request: try again")
	case errors.Is(err, task.ErrBadCursor):
		return httpapi.Error(http.StatusBadRequest, "validation_error", pagecursor.Problem)
	default:
		return httpapi.Internal(ctx, h.log, err)
	}
}

type listJSON struct {
	Tasks  []taskJSON `json:"tasks"`
	Cursor string     `json:"cursor,omitempty"`
}

type taskJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Status      string `json:"status"`
	DueAt       string `json:"dueAt"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
	CompletedAt string `json:"completedAt,omitempty"`
	ExpiredAt   string `json:"expiredAt,omitempty"`
	// Reminder is "none", "15m", "1h" or "1d"; RemindAt (RFC 3339 UTC) is
	// dueAt minus it, absent for none.
	Reminder string `json:"reminder"`
	RemindAt string `json:"remindAt,omitempty"`
}

func toJSON(t task.Task) taskJSON {
	return taskJSON{ID: t.TaskID, Title: t.Title, Description: t.Description, Status: string(t.Status),
		DueAt: task.FormatTime(t.DueAt), CreatedAt: task.FormatTime(t.CreatedAt), UpdatedAt: task.FormatTime(t.UpdatedAt),
		CompletedAt: task.FormatTime(t.CompletedAt), ExpiredAt: task.FormatTime(t.ExpiredAt),
		Reminder: string(t.Reminder.Or()), RemindAt: task.FormatTime(t.RemindAt)}
}
