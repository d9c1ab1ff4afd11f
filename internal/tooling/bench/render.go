package bench

import (
	"fmt"
	"strings"
)

// RenderDoc renders docs/PERFORMANCE.md from one run.
func RenderDoc(r Report) (string, error) {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	bare, okBare := r.InitMedian(RefBare)
	floor, okFloor := r.InitMedian(RefFloor)

	p("# Performance\n\n")
	p("Written by `make bench` (`go run ./cmd/bench`, logic in `internal/tooling/bench`): do not edit by hand, run it again\n")
	p("([how](#method-how-to-run-it)). This page holds the measurements, the breakdowns that explain them, and the\n")
	p("budget they are held to.\n\n")

	p("## The run\n\n")
	p("- **When:** %s to %s (UTC).\n", r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"))
	p("- **Machine:** %d CPUs (`nproc`), %s, %s, %s.\n", r.Machine.NumCPU, r.Machine.CPU, r.Machine.OS, r.Machine.Go)
	p("- **Load average** (`/proc/loadavg`, 1, 5 and 15 minutes): %s at the start, %s at the end.\n", r.Machine.LoadStart, r.Machine.LoadEnd)
	p("- **Command:** `%s` (runs=%d, synth-runs=%d, build-runs=%d, benchtime=%s", r.Options.Command, r.Options.InitRuns, r.Options.SynthRuns, r.Options.BuildRuns, r.Options.BenchTime)
	if len(r.Options.Skip) > 0 {
		p(", skipped: %s", strings.Join(r.Options.Skip, ", "))
	}
	p(").\n")
	if r.Options.Quick {
		p("- **Quick run** (`-quick`): the smallest settings, to check the tooling; too few runs for conclusions.\n")
	}
	warnings := r.Machine.LoadWarnings()
	for _, w := range warnings {
		p("- **Warning:** %s.\n", w)
	}
	if len(warnings) == 0 && r.Machine.LoadStart.Read {
		p("- The machine was not busy by the thresholds below (%.1f per CPU at the start, %.1f at the end).\n", BusyStartPerCPU, BusyEndPerCPU)
	}
	p("- Every comparison is made within one run, the candidates interleaved in a random order each round, and\n")
	p("  medians are reported with their spread; ratios are more stable than absolute numbers. Each function's cold\n")
	p("  init is compared with its floor run next to it in the same rounds, with a bootstrap interval of the ratio.\n\n")

	p("## Budget\n\n")
	worst, worstRatio, met, resolved, ok := r.InitVerdict()
	budget := fmt.Sprintf("Cold init ≤ %.1f× its floor for every function", InitBudget)
	switch {
	case !ok:
		p("- **%s:** not measured in this run.\n", budget)
	case met:
		p("- **%s:** met; the highest, %s, is at %.2f× its floor", budget, worst, worstRatio)
		if resolved {
			p(", and every %.0f%% interval is within it.\n", BootstrapLevel*100)
		} else {
			p("; some %.0f%% intervals reach above it (see the [table](#each-function-against-its-floor)).\n", BootstrapLevel*100)
		}
	default:
		p("- **%s:** **not met**: %s is at %.2f× its floor (`%s`). See the [table](#each-function-against-its-floor).\n", budget, worst, worstRatio, FunctionFloor(worst))
	}
	p("  A function's floor is a binary that only sets up the AWS SDK as the mains do (`config.LoadDefaultConfig`,\n")
	p("  `internal/core/lambdaenv/awsenv`) and creates the same clients as that function; for a function that calls no AWS\n")
	p("  API (presignup) it is the bare function. What is above the floor is the function's own code.\n")
	empty, app := Median(r.Synth[SynthEmpty]), Median(r.Synth[SynthApp])
	if empty > 0 && app > 0 {
		p("- **Synth of the dev app with a warm cache:** %.2f s against %.2f s for the empty app, %.2f× (reported; no budget).\n", app, empty, app/empty)
	} else {
		p("- **Synth of the dev app with a warm cache:** not measured in this run.\n")
	}
	p("\n")

	p("## Functions: bundle size and cold init\n\n")
	p("**Size:** each `lambdas/*` package built by `gofn.Build` (the code synth's bundling runs), and zipped (deflate)\n")
	p("as `bootstrap`. The command `gofn.Build` ran, as recorded:\n\n```sh\n%s\n```\n\n", r.BuildCommand)
	p("**Cold init:** the same build with `GOARCH` set to this machine's (a wrapper around the go command; the flags\n")
	p("are gofn's), each binary started with `AWS_LAMBDA_RUNTIME_API` pointing at a stub of the Lambda runtime API on a\n")
	p("loopback port (`internal/tooling/bench.RunToFirstNext`) and stopped when it asks for its first event\n")
	p("(`GET /2018-06-01/runtime/invocation/next`): the init is the time from starting the process to that request,\n")
	p("what the Runtime Interface Emulator's `INIT REPORT` measures. The same runs give the process's CPU time up to\n")
	p("that request (the sum over its threads of `/proc/<pid>/task/*/schedstat`): it leaves out the time spent waiting\n")
	p("for a CPU, so it grows far less than the wall time when other work holds the CPUs (shared caches still inflate\n")
	p("it), and on Lambda, where a 128 MB function gets a fraction of a vCPU, the init follows it. Each gets the\n")
	p("environment its main requires, with dummy values and\n")
	p("fake credentials (`internal/tooling/bench.LambdaEnv`), so init completes without network. One warm-up round is\n")
	p("dropped.\n\nThe references:\n\n")
	p("- `ref: bare`: an aws-lambda-go function that does nothing (`internal/tooling/bench/refs/bare`);\n")
	p("- `floor: <clients>`: `internal/tooling/bench/refs/floor` built with one `floor_<service>` tag per client, so it links and\n")
	p("  creates exactly those clients after `config.LoadDefaultConfig`; one per distinct client set of the functions\n")
	p("  (`internal/tooling/bench.FunctionClients`, checked against each main's imports by `TestFunctionClientsMatchTheMains`);\n")
	p("- `stage: …`: the to-do app's four-client floor stopped at each step of its set-up (below);\n")
	if r.PythonMeasured {
		p("- `ref: python3 …`: not under the emulator: the wall time of `python3 -c` with nothing, and with `import boto3` and\n")
		p("  four clients (for comparison with a Python runtime; compare the two with each other, not with the Go rows).\n")
	}
	p("\n%s\n", r.InitTable().Markdown())

	p("### Each function against its floor\n\n")
	pc := r.Paired()
	if r.ColdInit != nil {
		p("Paired, %d rounds after the warm-up round: in each round every function runs right next to a run of its own\n", pc.Rounds)
		p("floor (the two in a random order; the pairs and the references in a random order), so both see the same\n")
		p("load. A floor used by several functions runs once next to each of them. The ratio is the function's median\n")
		p("over its floor's; the interval is a paired bootstrap of it (%d resamples of the rounds, a round's two runs\n", BootstrapResamples)
		p("kept together). **≤ %.1f×** is decided by the ratio; \"interval reaches\" or \"interval from\" says the\n", InitBudget)
		p("budget lies inside the interval, so that answer is within this run's noise.\n\n")
	} else {
		p("This run predates the paired measurement: the i-th run of each function is paired with the i-th run of its\n")
		p("floor (the same round).\n\n")
	}
	p("%s\n", r.ColdInitTable().Markdown())
	p("Nothing pins the CPU or sets `GOMAXPROCS`: at the memory sizes used here Lambda shows a function two vCPUs\n")
	p("and limits it by a CPU share, so the Go runtime there starts with `GOMAXPROCS=2` (its default never goes\n")
	p("below 2 for a CPU limit), as on this 2-CPU machine; pinning to one CPU would set it to 1 and measure a\n")
	p("scheduler Lambda does not run.\n\n")

	p("### Where the floor's time goes\n\n")
	p("The four-client floor stops its set-up at a stage chosen by `BENCH_FLOOR_STAGE`, all in the same run:\n\n")
	p("%s\n", r.FloorBreakdown().Markdown())
	stage := func(i int) (float64, bool) { return r.InitMedian(FloorStages[i].Name) }
	imp, ok1 := stage(0)
	ldc, ok2 := stage(1)
	cli, ok3 := stage(2)
	env, ok4 := stage(3)
	lazy, ok5 := stage(4)
	if okBare && ok1 && ok2 && ok3 && ok4 && ok5 {
		p("Of the floor's %s ms above bare: package `init` of the SDK packages %s ms, `LoadDefaultConfig` %s ms,\n", ms(cli-bare), ms(imp-bare), ms(ldc-imp))
		p("the four clients %s ms. An `aws.Config` from the region and credential variables alone would give %s ms with\n", ms(cli-ldc), ms(env))
		p("the clients (%s bare) and %s ms with lazy clients (%s bare), but it ignores the SDK's other documented\n", ratio(env, bare), ms(lazy), ratio(lazy, bare))
		p("variables (`AWS_ENDPOINT_URL_<SERVICE>`, FIPS, dual-stack, retries), so no main does it. Negative or tiny\n")
		p("differences are within the noise.\n\n")
	}
	if pyBare, ok := r.InitMedian(RefPythonBare); ok && okBare && okFloor {
		py, _ := r.InitMedian(RefPythonBoto3)
		p("For comparison: `import boto3` and four clients add %s ms to the bare Python interpreter on this machine;\n", ms(py-pyBare))
		p("the Go SDK's set-up with four clients adds %s ms to the bare Go function.\n\n", ms(floor-bare))
	}

	p("### Package init\n\n")
	if len(r.InitTrace) > 0 {
		p("Each binary run %d times on its own with `GODEBUG=inittrace=1` (the Go runtime prints every package's `init`:\n", r.InitTraceRuns)
		p("wall time, bytes and allocations); the medians per package, summed. Wall times are as noisy as the rest;\n")
		p("allocations are exact and do not depend on the load.\n\n%s\n", r.InitTraceTable().Markdown())
		p("The packages with the longest init in `%s`:\n\n%s\n", RefFloor, r.TopInitTable(RefFloor, 15).Markdown())
		cfgMs, cfgAllocs := r.ConfigOnlyInit(RefFloor)
		all, _ := InitTraceTotals(r.InitTrace[RefFloor])
		p("- The service packages' generated tables (`schemas`, `internal/endpoints`) are most of it. A function that\n")
		p("  uses a client cannot avoid its package's init; its floor pays it too.\n")
		p("- The `config` package (`LoadDefaultConfig`) brings the SSO, SSO OIDC, STS and sign-in clients and the\n")
		p("  credential providers: %s ms and %.0f of the %.0f allocations of the floor's package init. It is what reads\n", ms(cfgMs), cfgAllocs, all.Allocs)
		p("  the SDK's documented variables on a function, and every floor includes it.\n\n")
	} else {
		p("Not traced in this run.\n\n")
	}

	p("## Synth\n\n")
	p("`cdk synth` of this app (dev) against a Go CDK app with one stack and one SQS queue (a scratch module requiring\n")
	p("the same aws-cdk-go, constructs and jsii versions as `go.mod`); the same synth with `constructs/gofn`'s bundle\n")
	p("cache off (`%s=off`: every function is built); and `cdk list` of this app, which synthesizes it with\n", "GOFN_CACHE")
	p("bundling skipped. Interleaved in a random order each round, after one dropped warm-up round that fills the Go\n")
	p("build cache and the bundle cache (a folder of this run), as after a first `make synth`. Commands:\n\n")
	for _, c := range r.SynthCommands {
		p("- `%s`\n", c)
	}
	if r.WebPlaceholder {
		p("\n`web/dist` was not built, so this app was synthesized with `-c webPlaceholder=true`.\n")
	}
	p("\n%s\n", r.SynthTable().Markdown())
	nob, nocache := Median(r.Synth[SynthAppNoBundling]), Median(r.Synth[SynthAppNoCache])
	if empty > 0 && app > 0 && nob > 0 {
		p("Breakdown of the %.2f s: bundling with a warm bundle cache (the `go list` that computes each function's source\n", app)
		p("key, the copy of the cached binaries and the staging of the assets) is synth minus list, %.2f s (%.0f%% of\n", app-nob, 100*(app-nob)/app)
		p("the synth); the rest over the empty app, %.2f s, is the jsii/CDK work of a bigger app and the `go run` of a\n", nob-empty)
		p("bigger program.")
		if nocache > 0 {
			p(" With the cache off, bundling runs `go build` and takes %.2f s (synth minus list): the cache\n", nocache-nob)
			p("saves %.2f s per synth of unchanged sources.", nocache-app)
		}
		p("\n\n")
		if app < nob || nob < empty || (nocache > 0 && nocache < app) {
			p("Some differences above are negative: the noise of this run is larger than they are; run it again on an\n")
			p("idle machine before reading them.\n\n")
		}
	}
	p("**Bundling:** `constructs/gofn` keys each function's binary by its sources (the files of every package of the\n")
	p("module it imports, the versions of the other modules, go.mod, the go command's version and gofn's flags) and keeps\n")
	p("it in a cache folder (`GOFN_CACHE`; default under the user's cache folder). A synth of unchanged sources copies\n")
	p("the binaries instead of building them; the asset hash, the hash of the binary, is the same either way\n")
	p("(`TestBundleCache`). The functions that changed are built in one `go build -o <dir>/` of their packages.\n\n")
	if len(r.Builds[BuildSequential]) > 0 {
		p("The builds alone, outside CDK, same flags and environment (read from the go command `gofn.Build` runs,\n")
		p("through a recording wrapper):\n\n%s\n", r.BuildTable().Markdown())
	}

	p("## `go test -bench`\n\n")
	if r.GoBenchCommand != "" {
		if !r.GoBenchAt.IsZero() {
			p("Run again on its own at %s (UTC), after the rest of this run.\n\n", r.GoBenchAt.Format("2006-01-02 15:04"))
		}
		p("`%s`\n\n%s\n", r.GoBenchCommand, r.GoBenchTable().Markdown())
	} else {
		p("Not run in this run.\n\n")
	}
	p("The benchmarks are every `*_bench_test.go` of the module; each says what it measures in its comment.\n\n")

	tc, err := TaskCostSection(r)
	if err != nil {
		return "", err
	}
	p("%s", tc)
	p("## Cost per 1M campaign sends\n\n")
	if r.Campaign != nil {
		p("One campaign of %d recipients run through the real provisioner (`internal/campaigns/provision`) and send\n", r.Campaign.Recipients)
		p("function (`internal/campaigns/send`) on the in-memory adapters, every schedule firing once at its time, with\n")
		p("counting wrappers that count each store and sender call as its DynamoDB adapter makes it\n")
		p("(`internal/tooling/bench.CountCampaignSends`, pinned by `TestCountCampaignSends`); totals divided by the recipients:\n\n")
		p("%s\n", r.CampaignUsageTable().Markdown())
		cc, err := r.CampaignCostTable()
		if err != nil {
			return "", err
		}
		p("%s\n", cc.Markdown())
		p("- The campaign API writes the campaign and its tasks once (batch writes are billed per item); the provisioner\n")
		p("  reads the tasks a page at a time (a Query reads up to 4 KB per read unit; task items are under 1 KB) and\n")
		p("  creates one schedule per task (`CreateSchedule` is not billed), each of which deletes itself after it fires.\n")
		p("- The send function reads the task and the campaign, claims the task, writes the SES idempotency record, sends\n")
		p("  one message (SES, %s), records the receipt and writes the task's result.\n", ListPrices.SESMessage.Source)
		p("- The progress function is invoked at most once per task write (one record per stream batch: the upper bound);\n")
		p("  its own reads and AppSync publishes are not counted. Failures, retries and the reconciler are not counted.\n\n")
	} else {
		p("Not counted in this run.\n\n")
	}

	p("## Reconciler reads per pass\n\n")
	if len(r.ReconcileReads) > 0 {
		p("One full pass of the core's reconciler (`internal/core/reconcile`) over a table of the jobs example's schema\n")
		p("(`examples/jobs/jobschema`), 1%% of its items armed (their schedules in place: no drift), the rest fired and delivered,\n")
		p("as many of them in the last day as are armed, each item about 1 KB; through the DynamoDB adapters of both\n")
		p("listings (`dynamo.ArmedItems`, `dynamo.IndexedItems`) against a table that counts their reads\n")
		p("(`internal/tooling/bench.MeasureReconcileReads`, pinned by `TestReconcileReadsGrowWithTheArmedItems`). Read units:\n")
		p("%s. A pass lists twice (the overdue sweep, then the items phase); the index's\n", ReadUnitModel)
		p("fired partition is read for the last day only ([the armed index](decisions/armed-index.md)).\n\n")
		p("%s\n", r.ReconcileReadsTable().Markdown())
	} else {
		p("Not counted in this run.\n\n")
	}

	p("## Prices\n\n")
	p("%s, each checked on the date shown:\n\n%s\n", ListPrices.Region, PriceTable(ListPrices).Markdown())

	p("## Memory sizes\n\n")
	p("Lambda allocates CPU in proportion to memory: at 1,769 MB a function has the equivalent of one vCPU\n")
	p("(https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). The table takes each measured\n")
	p("median (one host core), divides it by this run's load factor (bare measured / bare on an idle core, %s / %.1f ms =\n", ms(bare), IdleBareMs)
	p("%.1f), and scales it by 1769/MB to estimate the cold init in AWS at each size; it is an upper bound, as Lambda\n", r.LoadFactor())
	p("does not document the CPU share during init. Rule: a function nobody waits for is I/O bound and stays at 128 MB;\n")
	p("a user-facing one (api, the Cognito triggers) gets the smallest size at which its estimated cold init is under\n")
	p("%d ms. Memory sizes now: from %s.\n\n", ColdInitTargetMs, r.MemoryFrom)
	p("%s\n", r.MemoryTable().Markdown())

	p("## Method: how to run it\n\n")
	p("On an idle machine, from the module root, after `npm ci` (the CDK CLI) and with Go on the PATH:\n\n")
	p("```sh\nmake bench                                  # everything; writes this page and bin/bench-report.json\n")
	p("make bench BENCH_FLAGS=\"-runs 5 -skip synth\" # fewer runs, a part skipped (init, synth, gobench)\n")
	p("go run ./cmd/bench -quick -out \"\"           # smallest settings, prints only: checks the tooling\n")
	p("go run ./cmd/bench -from bin/bench-report.json  # render this page again from the last run\n")
	p("make bench-init                             # only each function against its floor, printed (a few minutes)\n```\n\n")
	p("The run records the load average at the start and at the end and warns (on the terminal and on this page)\n")
	p("when the 1-minute load was above %.1f per CPU at the start (something else was running) or above %.1f per\n", BusyStartPerCPU, BusyEndPerCPU)
	p("CPU at the end (the bench's own work stays under one busy core); a warned run should be repeated on an idle\n")
	p("machine before its numbers are read. It takes minutes; the bundle cache of its synth runs is a folder of the\n")
	p("run, so the user's cache is not touched.\n")
	return b.String(), nil
}

// RIEModule is the Lambda Runtime Interface Emulator InstallRIE installs
// into bin/ for the bootstrap tests (not a requirement of this module).
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// TaskCostSection is the doc's section "Cost per 1M task lifecycles, per
// timer": the counted usage, this app's cost, its assumptions and the
// comparison with the seed's design (cmd/bench -only cost prints it).
func TaskCostSection(r Report) (string, error) {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Cost per 1M task lifecycles, per timer\n\n")
	p("The to-do app's lifecycles on each timer (\"timer\"): EventBridge Scheduler (one schedule per task),\n")
	p("Step Functions (one Standard execution per task: a Wait state, then a LambdaInvoke of the firing function) and\n")
	p("TTL (one marker item whose TTL is the due time; its deletion, filtered from the table's stream, invokes the\n")
	p("firing function). The to-do app's firing function (`lambdas/todofire`) runs its target inside it: one function\n")
	p("per firing, which claims, notifies and records. The calls are counted by running one lifecycle at a time through the in-process pipeline\n")
	p("(`internal/tooling/pipeline`: the real handler code on the memory adapters, with each timer's in-memory stand-in) with\n")
	p("counting hooks (`internal/tooling/bench.CountLifecycle`, pinned by `TestCountLifecycle`). Each lifecycle starts with\n")
	p("`POST /tasks`:\n\n")
	p("- **expire:** left alone, it expires at its deadline and its owner gets one email;\n")
	p("- **cancel:** completed before its deadline: the pipeline deletes its schedule (stops its execution, deletes its marker);\n")
	p("- **reschedule:** its deadline is moved once, the pipeline moves the timer, and it expires then.\n\n")
	p("%s\n", r.UsageTable().Markdown())
	ct, err := r.CostTable()
	if err != nil {
		return "", err
	}
	p("This app (Go, arm64, memory as deployed):\n\n%s\n", ct.Markdown())
	p("Assumptions:\n\n")
	p("- One record per stream batch and one message per queue batch (the upper bound; batching lowers the\n")
	p("  Lambda and SQS lines). The cancellation stream mapping's filters pass the records whose image is in an armed\n")
	p("  state (an INSERT's new image, a MODIFY's either image, a REMOVE's old one); each invokes the stream processor.\n")
	p("  Filtered records are free, as are a Lambda trigger's stream reads (%s).\n", StreamReadsFreeURL)
	p("- Step Functions bills state transitions (%s): an execution that fires makes two (Wait, then the\n", ListPrices.SFNTransition.Source)
	p("  LambdaInvoke), one stopped in its Wait makes one; StartExecution and StopExecution are not billed. A retried\n")
	p("  invocation would add one each; none is counted.\n")
	p("- TTL: the marker's put, overwrite and delete are one write unit each; the TTL deletion itself is free\n")
	p("  (%s), and its stream record reaches the firing function through a Lambda trigger (free reads).\n", TTLDeletesFreeURL)
	p("  The TTL timer's watcher (`ttlwatch`) runs on a schedule: a fixed cost, not per lifecycle.\n")
	p("- The worker's event source mapping makes one `ReceiveMessage` and one `DeleteMessageBatch` per batch. Its\n")
	p("  empty long polls (a few per minute per poller whatever the traffic) are a fixed cost, not per lifecycle.\n")
	p("- Each DynamoDB request is one request unit (items under 1 KB); a failed conditional write still costs one.\n")
	p("  The API's count of the user's pending tasks at create (`CountUserPending`) is priced as one read unit.\n")
	p("- Warm durations are assumed, not measured (no AWS account): ")
	for i, k := range Keys(AssumedDurationMs) {
		if i > 0 {
			p(", ")
		}
		p("%s %.0f ms", k, AssumedDurationMs[k])
	}
	p(".\n  1%% of invocations start cold and pay the init (billed for every runtime), at the measured median scaled to\n")
	p("  the function's CPU share.\n")
	p("- Logs: the handler code's JSON logs as counted, plus 600 bytes of platform lines per invocation and a\n")
	p("  500-byte API Gateway access log line per request. EMF metric lines are not counted.\n")
	p("- The reconcilers are a fixed cost per period, not per lifecycle. Free tiers are ignored.\n\n")
	sct, err := r.SeedCostTable()
	if err != nil {
		return "", err
	}
	p("On the Scheduler timer, against the seed's design (Python functions calling AWS inline, on x86_64 at 128 MB;\n")
	p("the same AWS calls, its expiry function publishing itself; %d ms more per invocation, cold init ", SeedOverheadMs)
	if r.PythonMeasured {
		py, _ := r.InitMedian(RefPythonBoto3)
		p("the measured `python3 + boto3 + 4 clients` scaled the same way, %s ms):\n\n", ms(EstimatedInitMs(py, 128)))
	} else {
		p("%d ms):\n\n", SeedInitMs)
	}
	p("%s\n", sct.Markdown())
	var totals []string
	for _, pu := range r.Usage {
		if pu.Path != PathExpire {
			continue
		}
		c, err := ListPrices.Price(pu.Usage, Designs(r)[0])
		if err != nil {
			return "", err
		}
		totals = append(totals, fmt.Sprintf("%s on %s", usd(c.Total()*1e6), timerLabel(pu.Timer)))
	}
	p("A million tasks that expire cost %s. The email (SNS email, $20 per million) and API Gateway are\n", strings.Join(totals, ", "))
	p("most of every bill; Step Functions adds its state transitions ($25 per million), the TTL timer a marker write\n")
	p("per arm, move or cancel; the Lambda lines are small in every design.\n\n")

	return b.String(), nil
}
