package test

import (
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestReminderSchedulesAreGranted: a task's reminder is a second schedule
// named with tableschema.Todo().ReminderNamePrefix ("remind-"). The API
// function creates it, the cancellation worker makes, moves and deletes
// it, and the reconciler repairs it: their scheduler grants are on every
// schedule of the group (schedule/<group>/*), not on the deadline
// schedules' prefix alone, so a reminder name is covered. A grant scoped
// to "task-*" would make every reminder write an AccessDenied.
func TestReminderSchedulesAreGranted(t *testing.T) {
	s := Stack(t, "dev")
	group := s.Resources("AWS::Scheduler::ScheduleGroup")[s.LogicalID(t, "AWS::Scheduler::ScheduleGroup", "TasksScheduleGroup")]
	name, _ := Props(group)["Name"].(string)
	reminder := "schedule/" + name + "/" + task.ReminderName("01JBQ1R8ZK3W4X5Y6Z7A8B9C0D")
	if !strings.HasPrefix(task.ReminderName("x"), tableschema.ReminderNamePrefix) {
		t.Fatalf("reminder name %q lacks the prefix %q", task.ReminderName("x"), tableschema.ReminderNamePrefix)
	}
	for _, tc := range []struct {
		function string
		actions  []string
	}{
		{"ApiHandler", []string{"scheduler:CreateSchedule"}},
		{"CancellationWorker", []string{"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule"}},
		{"TasksReconcilerFunction", []string{"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:GetSchedule"}},
	} {
		t.Run(tc.function, func(t *testing.T) {
			granted := map[string]bool{}
			for _, st := range s.FunctionStatements(t, tc.function) {
				for _, r := range resources(st) {
					// cfnText renders the ARN; its path is after ":schedule/".
					i := strings.Index(r, ":schedule/")
					if i < 0 {
						continue
					}
					if ok, _ := path.Match(r[i+1:], reminder); !ok {
						continue
					}
					for _, a := range Actions(st) {
						granted[a] = true
					}
				}
			}
			for _, a := range tc.actions {
				if !granted[a] {
					t.Errorf("%s may not %s on %s: got %v", tc.function, a, reminder, slices.Sorted(maps.Keys(granted)))
				}
			}
		})
	}
}
