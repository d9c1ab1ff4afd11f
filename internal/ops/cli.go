package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
)

// Exit codes.
const (
	ExitOK      = 0 // done, nothing wrong found
	ExitError   = 1 // the command failed (AWS, network, configuration)
	ExitUsage   = 2 // the command line is wrong
	ExitProblem = 3 // why or drift found something to mend
)

// Opener discovers the stack called name.
type Opener func(ctx context.Context, stack string) (*World, error)

// world is how a command reaches its stack.
type worldFunc func() (Operator, error)

// errProblem: the command ran and found a problem (ExitProblem).
var errProblem = errors.New("found a problem")

type flags struct {
	stack, table string
	dev          string
	json         bool
	quiet        bool
}

// redriveOutcome turns what a redrive did into its exit: an error when a
// re-send failed (ExitError), errProblem when a message was left for the
// operator (kept, or re-sent and not deleted), nil when all went through.
func redriveOutcome(rs []Redriven) error {
	failed, left := 0, 0
	for _, r := range rs {
		switch {
		case strings.HasPrefix(r.Action, "failed"):
			failed++
		case strings.HasPrefix(r.Action, "kept"), strings.Contains(r.Action, "not deleted"):
			left++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d message(s) could not be re-sent and were kept: run redrive again", failed, len(rs))
	}
	if left > 0 {
		return errProblem
	}
	return nil
}

// Main is the unschedule command: it executes args (without the program's
// name) on the stack found with the SDK's standard configuration, and
// returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, args, stdout, stderr, OpenAWS)
}

// OpenAWS discovers the stack called name with the SDK's standard
// configuration (awsenv.Config: profiles, regions, endpoint overrides).
func OpenAWS(ctx context.Context, stack string) (*World, error) {
	cfg, err := awsenv.Config(ctx)
	if err != nil {
		return nil, err
	}
	return Open(ctx, cfg, stack)
}

// Run executes args on the stacks open discovers, and returns the exit
// code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, open Opener) int {
	line := &progressLine{w: stderr}
	root := newRoot(ctx, stdout, stderr, open, line)
	root.SetArgs(args)
	err := root.Execute()
	line.end()
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errProblem):
		return ExitProblem
	case errors.Is(err, ErrUsage), isUsage(err):
		fmt.Fprintln(stderr, "unschedule:", err)
		return ExitUsage
	default:
		fmt.Fprintln(stderr, "unschedule:", err)
		return ExitError
	}
}

// isUsage reports cobra's own command-line errors.
func isUsage(err error) bool {
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "required flag", "invalid argument", "flag needs"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

func newRoot(ctx context.Context, stdout, stderr io.Writer, open Opener, line *progressLine) *cobra.Command {
	f := &flags{}
	root := &cobra.Command{
		Use:   "unschedule",
		Short: "Operate a deployed Unschedule stack: why an item is where it is, drift, failure queues",
		Long: `unschedule reads a deployed stack, found by its name: its item tables and their
schemas, each table's timer, its queues and its functions, from CloudFormation
and the functions' configuration. It runs the functions' own code.

AWS access is the SDK's standard configuration: AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>, the shared config files.

Exit codes: 0 ok, 1 error, 2 usage, 3 found a problem (why, drift, dlq redrive).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&f.stack, "stack", "", "the stack's name, e.g. Unschedule-prod (required, unless --dev)")
	root.PersistentFlags().StringVar(&f.table, "table", "", "the table, by physical name or logical id (default: every table, or the one that holds the key)")
	root.PersistentFlags().StringVar(&f.dev, "dev", "", "the make dev server's URL, e.g. http://127.0.0.1:8080, instead of --stack")
	root.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON for scripts instead of tables")
	root.PersistentFlags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr")
	world := func() (Operator, error) {
		switch {
		case f.dev != "" && f.stack != "":
			return nil, fmt.Errorf("%w: give --stack or --dev, not both", ErrUsage)
		case f.dev != "":
			return NewRemote(f.dev, nil), nil
		case f.stack == "":
			return nil, fmt.Errorf("%w: --stack is required: the deployed stack's name, e.g. --stack Unschedule-prod (or --dev URL for make dev)", ErrUsage)
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "reading stack %s...\n", f.stack)
		}
		w, err := open(ctx, f.stack)
		if err != nil {
			return nil, err
		}
		if !f.quiet {
			w.Progress = line.update
		}
		return w, nil
	}
	root.AddCommand(whyCmd(ctx, f, world), driftCmd(ctx, f, world), dlqCmd(ctx, f, world), campaignsCmd(ctx, f, world))
	return root
}

// progressLine writes one updating line on stderr.
type progressLine struct {
	w    io.Writer
	open bool // a line is written and not ended
}

func (p *progressLine) update(done, total int, what string) {
	if total > 0 {
		fmt.Fprintf(p.w, "\r[%d/%d] %-60s", done, total, what)
	} else {
		fmt.Fprintf(p.w, "\r%-66s", what)
	}
	p.open = total == 0 || done < total
	if !p.open {
		fmt.Fprintln(p.w)
	}
}

// end ends the line, if one is open.
func (p *progressLine) end() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func whyCmd(ctx context.Context, f *flags, world worldFunc) *cobra.Command {
	var user, taskID string
	var logs bool
	var since time.Duration
	c := &cobra.Command{
		Use:   "why [pk=<partition>,sk=<sort>]",
		Short: "Show an item, its timer entry, its claim marks and failure messages, and a verdict",
		Example: `  unschedule why --stack Unschedule-prod pk=user-1,sk=01JD0000000000000000000001
  unschedule why --stack Unschedule-prod --user 3f1c... --task 01JD...
  unschedule why --stack Unschedule-prod --json userId=u1,taskId=t1
  unschedule why --stack Unschedule-prod --logs --since 72h pk=user-1,sk=01JD...`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := ""
			switch {
			case len(args) == 1 && user == "" && taskID == "":
				key = args[0]
			case len(args) == 0 && user != "" && taskID != "":
				key = "pk=" + user + ",sk=" + taskID
			default:
				return fmt.Errorf("%w: name the item by its key (pk=...,sk=...) or by --user and --task", ErrUsage)
			}
			w, err := world()
			if err != nil {
				return err
			}
			stack, onStack := w.(*World)
			if logs && !onStack {
				return fmt.Errorf("%w: --logs reads CloudWatch Logs: give --stack, not --dev", ErrUsage)
			}
			r, err := w.Why(ctx, f.table, key)
			if err != nil {
				return err
			}
			if logs {
				if r.History, err = stack.History(ctx, f.table, key, since); err != nil {
					return err
				}
			}
			if err := printWhy(cmd.OutOrStdout(), f.json, r); err != nil {
				return err
			}
			if r.Problem {
				return errProblem
			}
			return nil
		},
	}
	c.Flags().StringVar(&user, "user", "", "the to-do app's user (the task table's partition key)")
	c.Flags().StringVar(&taskID, "task", "", "the to-do app's task id (its sort key)")
	c.Flags().BoolVar(&logs, "logs", false, "add the item's history from the functions' logs (CloudWatch Logs Insights)")
	c.Flags().DurationVar(&since, "since", 24*time.Hour, "how far back --logs reads")
	return c
}

func driftCmd(ctx context.Context, f *flags, world worldFunc) *cobra.Command {
	var repair bool
	var key string
	c := &cobra.Command{
		Use:   "drift",
		Short: "The reconciler's plan, without acting: missing, orphaned, misplaced, overdue, claimed-but-undelivered",
		Long: `drift runs one pass of the reconciler's rules over each table without acting,
and counts what it would repair, with samples. --repair runs that pass with the
reconciler function's code and wiring (a scratch checkpoint: the function's own
is left as it is); --key narrows either to one item.`,
		Example: `  unschedule drift --stack Unschedule-prod
  unschedule drift --stack Unschedule-prod --repair --key pk=user-1,sk=01JD...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := world()
			if err != nil {
				return err
			}
			var rs []DriftReport
			if repair {
				rs, err = w.Repair(ctx, f.table, key)
			} else {
				rs, err = w.Drift(ctx, f.table, key)
			}
			if err != nil {
				return err
			}
			if err := printDrift(cmd.OutOrStdout(), f.json, rs); err != nil {
				return err
			}
			for _, r := range rs {
				if r.Total > 0 && r.Repaired == nil {
					return errProblem
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "run one reconciler pass that repairs what it finds")
	c.Flags().StringVar(&key, "key", "", "only this item: pk=<partition>,sk=<sort>")
	return c
}

func dlqCmd(ctx context.Context, f *flags, world worldFunc) *cobra.Command {
	c := &cobra.Command{Use: "dlq", Short: "The stack's failure queues: list, redrive"}
	var max int
	list := &cobra.Command{
		Use:     "list",
		Short:   "Every failure queue's messages, decoded to item keys and reasons, without consuming them",
		Example: `  unschedule dlq list --stack Unschedule-prod`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := world()
			if err != nil {
				return err
			}
			ls, err := w.DeadLetters(ctx, max)
			if err != nil {
				return err
			}
			return printLetters(cmd.OutOrStdout(), f.json, ls)
		},
	}
	var dry bool
	redrive := &cobra.Command{
		Use:   "redrive",
		Short: "Re-send each failure message where it belongs; delete it only after the re-send succeeded",
		Long: `redrive re-sends the cancellation dead letters to the FIFO queue (same group and
deduplication id), and invokes the function of each scheduler dead letter and
asynchronous failure again. A stream failure names sequence numbers, not items:
its records are answered by one drift --repair pass over the stream's table,
and deleted only after that pass ended without an error. A redrive stopped part-way and run again loses nothing and duplicates nothing
that the deduplication id or the claim does not absorb.

Exit 1 when a re-send failed (the message is kept: run redrive again), 3 when a
message was kept for you to look at (a poisoned message, an unknown table) or
re-sent but not deleted, 0 when every message went where it belongs.`,
		Example: `  unschedule dlq redrive --stack Unschedule-prod --dry-run
  unschedule dlq redrive --stack Unschedule-prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := world()
			if err != nil {
				return err
			}
			rs, err := w.Redrive(ctx, dry, max)
			if perr := printRedriven(cmd.OutOrStdout(), f.json, rs); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return err
			}
			return redriveOutcome(rs)
		},
	}
	redrive.Flags().BoolVar(&dry, "dry-run", false, "show what would be re-sent, and send nothing")
	c.PersistentFlags().IntVar(&max, "max", 1000, "at most this many messages per queue")
	c.AddCommand(list, redrive)
	return c
}

func campaignsCmd(ctx context.Context, f *flags, world worldFunc) *cobra.Command {
	c := &cobra.Command{Use: "campaigns", Short: "Scheduled email campaigns: cancel"}
	var owner string
	var dry bool
	cancel := &cobra.Command{
		Use:   "cancel",
		Short: "Cancel every unfinished campaign of one owner, with the campaign API's cancel",
		Long: `cancel marks each Draft, Provisioning or Active campaign of the owner Cancelled,
cancels its Pending send tasks and deletes their schedules, by the code of the
campaign API's cancel (internal/campaigns/campaigncancel), one campaign after
the other. Running sends finish; finished campaigns are left.`,
		Example: `  unschedule campaigns cancel --stack Unschedule-prod-campaigns --owner 3f1c... --dry-run`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := world()
			if err != nil {
				return err
			}
			w, ok := o.(*World)
			if !ok {
				return fmt.Errorf("%w: campaigns cancel needs --stack (make dev's campaigns are cancelled in its web app)", ErrUsage)
			}
			rs, err := w.CancelCampaigns(ctx, owner, dry)
			if perr := printCampaigns(cmd.OutOrStdout(), f.json, rs); perr != nil && err == nil {
				err = perr
			}
			return err
		},
	}
	cancel.Flags().StringVar(&owner, "owner", "", "the campaigns' owner: the sender's user pool sub (required)")
	cancel.Flags().BoolVar(&dry, "dry-run", false, "list the campaigns it would cancel, and change nothing")
	c.AddCommand(cancel)
	return c
}

func printCampaigns(out io.Writer, asJSON bool, rs []CampaignCancel) error {
	if asJSON {
		return writeJSONList(out, rs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CAMPAIGN\tSTATUS\tACTION\tTASKS CANCELLED\tSCHEDULES DELETED\n")
	for _, r := range rs {
		n, d := "-", "-"
		if r.Result != nil {
			n, d = fmt.Sprint(r.Result.Cancelled), fmt.Sprint(r.Result.SchedulesDeleted)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Campaign, r.Status, r.Action, n, d)
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

func printWhy(out io.Writer, asJSON bool, r WhyReport) error {
	if asJSON {
		return writeJSON(out, r)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "table\t%s\nkey\t%s\n", r.Table, r.Key)
	if !r.Found {
		fmt.Fprintf(tw, "item\tnone\n")
	}
	names := make([]string, 0, len(r.Item))
	for k := range r.Item {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(tw, "  %s\t%s\n", k, r.Item[k])
	}
	entry := "none"
	if r.Entry != nil {
		entry = r.Entry.Name + " at " + contract.FormatTime(r.Entry.At) + ": " + r.Entry.Detail
	} else if r.EntryNote != "" {
		entry += " (" + r.EntryNote + ")"
	}
	fmt.Fprintf(tw, "timer\t%s\nentry\t%s\n", r.Timer, entry)
	claim := []string{}
	for _, k := range sortedKeys(r.Claim) {
		claim = append(claim, k+"="+r.Claim[k])
	}
	fmt.Fprintf(tw, "claim\t%s\n", orNone(strings.Join(claim, " ")))
	fmt.Fprintf(tw, "messages\t%d\n", len(r.Messages))
	for _, l := range r.Messages {
		fmt.Fprintf(tw, "  %s\t%s\n", l.Queue, l.Reason)
	}
	fmt.Fprintf(tw, "verdict\t%s: %s\n", r.Verdict, r.Explanation)
	if r.History != nil {
		fmt.Fprintf(tw, "history\t%d line(s)\n", len(r.History))
		for _, l := range r.History {
			fmt.Fprintf(tw, "  %s\t%s %s %s\n", l.Time, l.Group, l.Level, l.Message)
		}
	}
	return tw.Flush()
}

func printDrift(out io.Writer, asJSON bool, rs []DriftReport) error {
	if asJSON {
		return writeJSON(out, rs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range rs {
		fmt.Fprintf(tw, "table %s (timer %s)\n", r.Table, r.Timer)
		fmt.Fprintf(tw, "KIND\tCOUNT\tSAMPLES\n")
		for _, k := range r.Kinds {
			var s []string
			for _, x := range k.Samples {
				s = append(s, orNone(x.Key)+" "+x.Schedule)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", k.Kind, k.Count, strings.TrimSpace(strings.Join(s, "; ")))
		}
		if r.Repaired != nil {
			fmt.Fprintf(tw, "repaired\t%d\t(created %d, moved %d, deleted %d, fired %d, errors %d)\n", r.Repaired.Repaired(),
				r.Repaired.SchedulesCreated, r.Repaired.SchedulesMoved, r.Repaired.SchedulesDeleted, r.Repaired.ItemsFired, r.Repaired.Errors)
		}
	}
	return tw.Flush()
}

func printLetters(out io.Writer, asJSON bool, ls []Letter) error {
	if asJSON {
		return writeJSONList(out, ls)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "QUEUE\tKIND\tKEY\tREASON\n")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Queue, l.Kind, orNone(l.Key), l.Reason)
	}
	fmt.Fprintf(tw, "%d message(s)\n", len(ls))
	if slices.ContainsFunc(ls, func(l Letter) bool { return strings.HasSuffix(l.Queue, ".fifo") }) {
		fmt.Fprintf(tw, "a FIFO queue shows the first message of each item only; redrive moves them all\n")
	}
	return tw.Flush()
}

func printRedriven(out io.Writer, asJSON bool, rs []Redriven) error {
	if asJSON {
		return writeJSONList(out, rs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "QUEUE\tKEY\tACTION\n")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Queue, orNone(r.Key), r.Action)
	}
	return tw.Flush()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeJSONList writes xs as a JSON array, [] rather than null when empty,
// so a script can always iterate it (schema/*.schema.json).
func writeJSONList[T any](out io.Writer, xs []T) error {
	if xs == nil {
		xs = []T{}
	}
	return writeJSON(out, xs)
}
