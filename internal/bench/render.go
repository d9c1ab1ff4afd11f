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
	p("Written by `make bench` (`go run ./cmd/bench`, logic in `internal/bench`): do not edit by hand, run it again.\n")
	p("Issue 13 asks for these measurements and sets two budgets; this page holds the measurements, the\n")
	p("breakdowns that explain them, and what was changed for the budgets.\n\n")

	p("## The run\n\n")
	p("- **When:** %s to %s (UTC).\n", r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"))
	p("- **Machine:** %d CPUs (`nproc`), %s, %s, %s; load average at the start: %s.\n", r.Machine.NumCPU, r.Machine.CPU, r.Machine.OS, r.Machine.Go, r.Machine.LoadAvg)
	p("- **Command:** `%s` (runs=%d, synth-runs=%d, build-runs=%d, benchtime=%s", r.Options.Command, r.Options.InitRuns, r.Options.SynthRuns, r.Options.BuildRuns, r.Options.BenchTime)
	if len(r.Options.Skip) > 0 {
		p(", skipped: %s", strings.Join(r.Options.Skip, ", "))
	}
	p(").\n")
	p("- **Noise:** the machine's 2 cores were shared with other jobs (other helpers compiling and running tests) at the same time. Every\n")
	p("  comparison is made within one run, the candidates interleaved in a random order each round, and\n")
	p("  medians are reported with the min–max spread; ratios are more stable than absolute numbers.\n\n")

	p("## Budgets\n\n")
	worst, worstRatio, met, ok := r.InitVerdict()
	switch {
	case !ok:
		p("- **Cold init (≤ %.1f× bare for every function that calls AWS):** not measured in this run.\n", InitBudget)
	case met:
		p("- **Cold init (≤ %.1f× bare for every function that calls AWS):** met; the slowest, %s, is at %.2f×.\n", InitBudget, worst, worstRatio)
	default:
		p("- **Cold init (≤ %.1f× bare for every function that calls AWS):** **not met**: %s is at %.2f× bare. See\n", InitBudget, worst, worstRatio)
		p("  [where the time goes](#where-the-floors-time-goes) and [package init](#package-init-what-is-left).\n")
	}
	empty, app := Median(r.Synth[SynthEmpty]), Median(r.Synth[SynthApp])
	if empty > 0 && app > 0 {
		verdict := "**not met**"
		if app/empty <= SynthBudget {
			verdict = "met"
		}
		p("- **Synth (≤ %.1f× the empty app):** %s: %.2f s against %.2f s, %.2f×. See [Synth](#synth).\n", SynthBudget, verdict, app, empty, app/empty)
	} else {
		p("- **Synth (≤ %.1f× the empty app):** not measured in this run.\n", SynthBudget)
	}
	p("- Changed for the budgets: `contract` no longer compiles two `{1,255}` regexps at init (found with the\n")
	p("  package init trace below); bundling builds every function in one `go build` (`constructs/gofn`); memory\n")
	p("  defaults from the [memory table](#memory-sizes). Every main that calls AWS loads its `aws.Config` with\n")
	p("  `config.LoadDefaultConfig` (`internal/lambdaenv/awsenv`), so the SDK's documented variables hold.\n\n")

	p("## Functions: bundle size and cold init\n\n")
	p("**Size:** each `lambdas/*` package built by `gofn.Build` (the code synth's bundling runs), and zipped (deflate)\n")
	p("as `bootstrap`. The command `gofn.Build` ran, as recorded:\n\n```sh\n%s\n```\n\n", r.BuildCommand)
	p("**Cold init:** the same `gofn.Build` with `GOARCH` set to this machine's (a wrapper around the go command;\n")
	p("the flags are gofn's), each binary started under the Lambda Runtime Interface Emulator (`%s`,\n", RIEModule)
	p("installed into `bin/`), invoked once with `{}`, and the emulator's `INIT REPORT(durationMs: …)` read: the time from\n")
	p("starting the bootstrap process to its first call to the runtime API's `/next`. Each gets the environment its\n")
	p("main requires, with dummy values and fake credentials (`internal/bench.LambdaEnv`), so init completes without\n")
	p("network. One warm-up round is dropped. Per run:\n\n")
	p("```sh\nbin/aws-lambda-rie --runtime-interface-emulator-address 127.0.0.1:$PORT1 --runtime-api-address 127.0.0.1:$PORT2 $BOOTSTRAP\n")
	p("curl -XPOST http://127.0.0.1:$PORT1/2015-03-31/functions/function/invocations -d '{}'\n```\n\nThe references:\n\n")
	p("- `ref: bare`: an aws-lambda-go function that does nothing (`internal/bench/refs/bare`);\n")
	p("- `ref: floor`: only `config.LoadDefaultConfig` and the DynamoDB, Scheduler, SNS and SQS clients (`internal/bench/refs/floor`;\n")
	p("  the union of what our functions create, so a slight over-estimate for each function), and its stages below;\n")
	if r.PythonMeasured {
		p("- `ref: python3 …`: not under the emulator: the wall time of `python3 -c` with nothing, and with `import boto3` and\n")
		p("  the four clients (the seed design's runtime; compare the two with each other, not with the Go rows).\n")
	}
	p("\n%s\n", r.InitTable().Markdown())

	p("### Where the floor's time goes\n\n")
	p("The floor binary stops its set-up at a stage chosen by `BENCH_FLOOR_STAGE`, all in the same run:\n\n")
	p("%s\n", r.FloorBreakdown().Markdown())
	stage := func(i int) (float64, bool) { return r.InitMedian(FloorStages[i].Name) }
	imp, ok1 := stage(0)
	ldc, ok2 := stage(1)
	cli, ok3 := stage(2)
	env, ok4 := stage(3)
	lazy, ok5 := stage(4)
	if okBare && ok1 && ok2 && ok3 && ok4 && ok5 {
		p("Of the floor's %s ms above bare: package `init` of the SDK packages %s ms, `LoadDefaultConfig` %s ms,\n", ms(cli-bare), ms(imp-bare), ms(ldc-imp))
		p("the four clients %s ms. Building the `aws.Config` from the region and credential variables alone (`AWS_REGION`,\n", ms(cli-ldc))
		p("the credential variables) instead of `LoadDefaultConfig` gives %s ms with the clients (%s bare), %s ms with lazy\n", ms(env), ratio(env, bare), ms(lazy))
		p("clients (%s bare). Negative or tiny differences are within the noise.\n\n", ratio(lazy, bare))
	}
	if pyBare, ok := r.InitMedian(RefPythonBare); ok && okBare && okFloor {
		py, _ := r.InitMedian(RefPythonBoto3)
		p("For the seed's runtime: `import boto3` and four clients add %s ms to the bare interpreter on this machine;\n", ms(py-pyBare))
		p("the Go SDK's whole set-up adds %s ms to the bare Go function.\n\n", ms(floor-bare))
	}

	p("### Package init: what is left\n\n")
	if len(r.InitTrace) > 0 {
		p("Each binary run %d times on its own with `GODEBUG=inittrace=1` (the Go runtime prints every package's `init`:\n", r.InitTraceRuns)
		p("wall time, bytes and allocations); the medians per package, summed. Wall times are as noisy as the rest;\n")
		p("allocations are exact and do not depend on the load.\n\n%s\n", r.InitTraceTable().Markdown())
		p("The packages with the longest init in `%s` (the mains' set-up):\n\n%s\n", RefFloor, r.TopInitTable(RefFloor, 15).Markdown())
		cfgMs, cfgAllocs := r.ConfigOnlyInit(RefFloor)
		all, _ := InitTraceTotals(r.InitTrace[RefFloor])
		p("- The service packages' generated tables (`schemas`, `internal/endpoints`) are most of it; DynamoDB's schemas\n")
		p("  alone are the largest. A function that uses a client cannot avoid its package's init.\n")
		p("- The `config` package (`LoadDefaultConfig`) brings the SSO, SSO OIDC, STS and sign-in clients and the\n")
		p("  credential providers: %s ms and %.0f of the %.0f allocations of the floor's package init. It stays: it is\n", ms(cfgMs), cfgAllocs, all.Allocs)
		p("  what reads the SDK's documented variables (endpoints, FIPS, dual-stack, retries) on a function.\n")
		p("- Our own packages: `contract` compiled `^[A-Za-z0-9_.-]{1,255}$` at init, which expands to 255 copies of\n")
		p("  the class: about 3,600 allocations and 260 KB, more than DynamoDB's schemas; it now checks the length and\n")
		p("  one `+` regexp (37 allocations). Every other package of ours allocates little at init.\n\n")
	} else {
		p("Not traced in this run.\n\n")
	}
	p("### Cold init: what was done\n\n")
	if okBare && okFloor {
		budgetMs := InitBudget * bare
		p("The budget is %s ms here (%.1f × %s ms).\n\n", ms(budgetMs), InitBudget, ms(bare))
		p("1. **Config from the region and credential variables alone** (tried, then undone): floor with `LoadDefaultConfig`:\n")
		p("   %s ms; without it (`%s`): %s ms. It silently ignored `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>`, the\n", ms(floor), FloorEnvConfig, ms(env))
		p("   FIPS and dual-stack switches and the retry settings, so `awsenv.Config` is `config.LoadDefaultConfig` again.\n")
		p("2. **Lazy clients** (not done): the floor with no client created measured %s ms against %s ms with the four\n", ms(lazy), ms(env))
		p("   (%s ms, against a min–max spread of tens of ms per row here). The adapters take their client when\n", ms(env-lazy))
		p("   built, so laziness would need a wrapper per client; not worth it for a gain this run cannot resolve.\n")
		p("3. **`contract`'s init** (done): see above.\n\n")
		if ok1 {
			p("Package init alone, with nothing called (`floor: SDK package init only`), is %s bare: ", ratio(imp, bare))
			if imp <= budgetMs {
				p("within the budget, so what remains above it is set-up work.\n\n")
			} else {
				p("above the budget before any set-up, so no change of what the mains do at init can meet it with these\n")
				p("SDK packages: it would take fewer or lighter service packages (the generated schema tables above).\n\n")
			}
		}
	} else {
		p("Not measured in this run.\n\n")
	}

	p("## Synth\n\n")
	p("`cdk synth` of this app (dev) against a Go CDK app with one stack and one SQS queue (a scratch module requiring\n")
	p("the same aws-cdk-go, constructs and jsii versions as `go.mod`), and `cdk list` of this app, which synthesizes it\n")
	p("with bundling skipped; interleaved in a random order each round, after one dropped warm-up round (the Go\n")
	p("build cache is warm, as after a first `make synth`). Commands:\n\n")
	for _, c := range r.SynthCommands {
		p("- `%s`\n", c)
	}
	if r.WebPlaceholder {
		p("\n`web/dist` was not built, so this app was synthesized with `-c webPlaceholder=true`.\n")
	}
	p("\n%s\n", r.SynthTable().Markdown())
	nob := Median(r.Synth[SynthAppNoBundling])
	if empty > 0 && app > 0 && nob > 0 {
		p("Breakdown: bundling (one `go build` of the %d functions and the staging of their output) is synth minus list, %.2f s\n", len(r.Functions), app-nob)
		p("(%.0f%% of the synth); the rest over the empty app, %.2f s, is the jsii/CDK work of a bigger app and the\n", 100*(app-nob)/app, nob-empty)
		p("`go run` of a bigger program.\n\n")
	}
	if len(r.Builds[BuildSequential]) > 0 {
		seq, one := Median(r.Builds[BuildSequential]), Median(r.Builds[BuildOne])
		p("The builds alone, outside CDK, same flags and environment (read from the go command `gofn.Build` runs,\n")
		p("through a recording wrapper):\n\n%s\n", r.BuildTable().Markdown())
		p("**Done:** `constructs/gofn` builds every main package under `lambdas/` in one `go build -o <dir>/` at the\n")
		p("first bundling of a synth, and each function's bundling moves its binary into its asset folder (the\n")
		p("binaries are byte-identical to separate builds: `TestBatchBinariesAreBuildsOwn`; Docker stays the fallback\n")
		p("without a go command). Here that is %.2f s instead of %.2f s for the builds.", one, seq)
		if empty > 0 && app > 0 && nob > 0 && app/empty > SynthBudget {
			p(" The budget is still not met: the\n")
			p("rest over the empty app is not bundling: `cdk list` (no bundling at all) is already %s the empty app, the\n", ratio(nob, empty))
			p("jsii round trips of a construct tree with hundreds of resources and the `go run` of a bigger program;\n")
			p("with bundling taking no time at all, synth would still be %s. Only a smaller tree or fewer jsii calls would cut it.", ratio(nob, empty))
		}
		p("\n\n")
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
	p("- The stream processor: `cancel.Processor.Process` on a batch of 100 change records, half of them transitions\n")
	p("  that enqueue a message, on an in-memory queue.\n")
	p("- The API create path: `POST /tasks` through `api.Handler.Serve` with the memory store and scheduler.\n")
	p("- The reconciler: one full pass (`reconcile.Reconciler.Run`) over 100,000 pending tasks whose schedules are all\n")
	p("  right: `confirmed` when every task records its schedule (`Task.ScheduledFor`, the steady state), `unconfirmed`\n")
	p("  when none does (one schedule read each); memory adapters, no rate\n")
	p("  limit, fixed clock. The listings come from snapshots sorted once: the memory adapters sort everything on\n")
	p("  every page, which would measure the fakes. In AWS the pass is bound by the scheduler rate limit\n")
	p("  (10 calls/s by default) for the tasks it has to read back: 100,000 unconfirmed tasks take about 10,000 s of\n")
	p("  calls, spread over runs by the checkpoint; confirmed ones cost no call.\n")
	p("- The campaign planner does not exist yet (issue 12): no benchmark.\n\n")

	p("## Cost per 1M task lifecycles\n\n")
	p("Only the EventBridge Scheduler execution layer exists today; the Step Functions and TTL layers (issue 11)\n")
	p("are not built, so they have no column. The calls are counted by running one lifecycle at a time through\n")
	p("the in-process pipeline (`internal/pipeline`: the real handler code on the memory adapters) with counting\n")
	p("hooks (`internal/bench.CountLifecycle`, pinned by `TestCountLifecycle`). Each lifecycle starts with `POST /tasks`:\n\n")
	p("- **expire:** left alone, it expires at its deadline and its owner gets one email;\n")
	p("- **cancel:** completed before its deadline: the pipeline deletes its schedule;\n")
	p("- **reschedule:** its deadline is moved once, the pipeline moves the schedule, and it expires then.\n\n")
	p("%s\n", r.UsageTable().Markdown())
	ct, err := r.CostTable()
	if err != nil {
		return "", err
	}
	p("%s\n", ct.Markdown())
	p("Assumptions:\n\n")
	p("- One record per stream batch and one message per queue batch (the upper bound; batching lowers the\n")
	p("  Lambda and SQS lines). The stream mapping's filter passes MODIFY and REMOVE records only, and each invokes\n")
	p("  the stream processor; filtered records are free, as are the stream reads of a Lambda trigger.\n")
	p("- The worker's event source mapping makes one `ReceiveMessage` and one `DeleteMessageBatch` per batch. Its\n")
	p("  empty long polls (a few per minute per poller whatever the traffic) are a fixed cost, not per lifecycle.\n")
	p("- Each DynamoDB request is one request unit (items under 1 KB); a failed conditional write still costs one.\n")
	p("  The API's count of the user's pending tasks at create (`CountUserPending`) is priced as one read unit; it\n")
	p("  reads the user's pending index entries, so it costs more for a user with many tasks.\n")
	p("- Warm durations are assumed, not measured (no AWS account): ")
	for i, k := range Keys(AssumedDurationMs) {
		if i > 0 {
			p(", ")
		}
		p("%s %.0f ms", k, AssumedDurationMs[k])
	}
	p(";\n  the seed's Python functions %d ms more each. 1%% of invocations start cold and pay the init (billed since\n", SeedOverheadMs)
	p("  August 2025 for every runtime); ours at the measured median scaled to the CPU share, the seed's at ")
	if r.PythonMeasured {
		py, _ := r.InitMedian(RefPythonBoto3)
		p("the measured\n  `python3 + boto3 + 4 clients` time scaled the same way (%s ms).\n", ms(EstimatedInitMs(py, 128)))
	} else {
		p("%d ms.\n", SeedInitMs)
	}
	p("- The seed's design (`seed 000`: Python functions calling AWS inline) makes the same AWS calls: it has the\n")
	p("  same API, stream processor, FIFO queue, worker and conditional expiry; it differs in runtime (Python on\n")
	p("  x86_64, 128 MB, the SAM default) and so only in the Lambda lines.\n")
	p("- Logs: the handler code's JSON logs as counted, plus 600 bytes of platform lines per invocation and a\n")
	p("  500-byte API Gateway access log line per request. EMF metric lines are not counted.\n")
	p("- The reconciler (every 30 minutes) is a fixed cost per period plus one `GetSchedule` (free) and part of a\n")
	p("  `Query` per pending task per pass; it is not per lifecycle. Free tiers are ignored.\n\n")
	p("The bill is the email (SNS email, $20 per million) and API Gateway; the Lambda lines are small in both\n")
	p("designs, so the runtime choice barely moves the cost: it moves latency.\n\n")
	p("Prices, US East (N. Virginia), checked %s:\n\n%s\n", ListPrices.Date, PriceTable(ListPrices).Markdown())

	p("## Memory sizes\n\n")
	p("Lambda allocates CPU in proportion to memory: at 1,769 MB a function has the equivalent of one vCPU\n")
	p("(https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). The table takes each measured\n")
	p("median (one host core), divides it by this run's load factor (bare measured / bare on an idle core, %s / %.1f ms =\n", ms(bare), IdleBareMs)
	p("%.1f: the machine was that much slower than idle), and scales it by 1769/MB to estimate the cold init in AWS at\n", r.LoadFactor())
	p("each size; it is an upper bound, as Lambda does not document the CPU share during init. Rule: a function nobody waits for (stream processor,\n")
	p("worker, expiry, reconciler) is I/O bound and stays at 128 MB; a user-facing one (api, the Cognito triggers)\n")
	p("gets the smallest size at which its estimated cold init is under %d ms. The constructs' defaults follow this table:\n", ColdInitTargetMs)
	p("api 256 MB (`constructs/taskapi`), postauth 256 MB (`constructs/notifications`), the others gofn's 128 MB.\n\n")
	p("Memory sizes now: from %s.\n\n", r.MemoryFrom)
	p("%s\n", r.MemoryTable().Markdown())
	return b.String(), nil
}

// RIEModule is the Lambda Runtime Interface Emulator cmd/bench installs
// into bin/ (not a requirement of this module).
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"
