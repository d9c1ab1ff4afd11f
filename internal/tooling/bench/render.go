package bench

import (
	_ "embed"
	"fmt"
	"strings"
	"text/template"
)

// performanceDoc is the text of docs/PERFORMANCE.md around the numbers and
// tables: "doc" is the page, "taskcost" its task cost section.
//
//go:embed performance.md.tmpl
var performanceDoc string

var docTemplate = template.Must(template.New("performance").Funcs(template.FuncMap{
	"ms": ms, "ratio": ratio, "join": strings.Join, "keys": Keys[float64], "priceTable": PriceTable,
	"sub": func(a, b float64) float64 { return a - b },
	"mul": func(a, b float64) float64 { return a * b },
	"div": func(a, b float64) float64 { return a / b },
}).Parse(performanceDoc))

// docConstants are the constants the doc's text quotes.
var docConstants = map[string]any{
	"InitBudget": InitBudget, "Level": BootstrapLevel * 100, "BootstrapResamples": BootstrapResamples,
	"BusyStartPerCPU": BusyStartPerCPU, "BusyEndPerCPU": BusyEndPerCPU, "IdleBareMs": IdleBareMs,
	"ColdInitTargetMs": ColdInitTargetMs, "RefFloor": RefFloor, "BuildSequential": BuildSequential,
	"ReadUnitModel": ReadUnitModel, "Prices": ListPrices, "StreamReadsFreeURL": StreamReadsFreeURL,
	"TTLDeletesFreeURL": TTLDeletesFreeURL, "AssumedDurationMs": AssumedDurationMs,
	"SeedOverheadMs": SeedOverheadMs, "SeedInitMs": SeedInitMs,
}

// docView is the report and the figures the doc's text derives from it.
type docView struct {
	R            Report
	K            map[string]any
	Bare, Floor  float64
	Verdict      Verdict
	Synth        struct{ Empty, App, NoBundling, NoCache float64 }
	Stages       *struct{ Imports, LoadConfig, Clients, Env, Lazy float64 }
	Python       *struct{ Bare, Boto3 float64 }
	Trace        struct{ ConfigMs, ConfigAllocs, Allocs float64 }
	SeedInitMs   float64
	ExpireTotals string
}

func newDocView(r Report) (docView, error) {
	v := docView{R: r, K: docConstants}
	var okBare, okFloor bool
	v.Bare, okBare = r.InitMedian(RefBare)
	v.Floor, okFloor = r.InitMedian(RefFloor)
	v.Verdict = r.InitVerdict()
	v.Synth.Empty, v.Synth.App = Median(r.Synth[SynthEmpty]), Median(r.Synth[SynthApp])
	v.Synth.NoBundling, v.Synth.NoCache = Median(r.Synth[SynthAppNoBundling]), Median(r.Synth[SynthAppNoCache])
	var st [5]float64
	all := okBare
	for i := range st {
		var ok bool
		st[i], ok = r.InitMedian(FloorStages[i].Name)
		all = all && ok
	}
	if all {
		v.Stages = &struct{ Imports, LoadConfig, Clients, Env, Lazy float64 }{st[0], st[1], st[2], st[3], st[4]}
	}
	py, _ := r.InitMedian(RefPythonBoto3)
	if pyBare, ok := r.InitMedian(RefPythonBare); ok && okBare && okFloor {
		v.Python = &struct{ Bare, Boto3 float64 }{pyBare, py}
	}
	v.Trace.ConfigMs, v.Trace.ConfigAllocs = r.ConfigOnlyInit(RefFloor)
	total, _ := InitTraceTotals(r.InitTrace[RefFloor])
	v.Trace.Allocs = total.Allocs
	v.SeedInitMs = EstimatedInitMs(py, 128)
	var totals []string
	for _, pu := range r.Usage {
		if pu.Path != PathExpire {
			continue
		}
		c, err := ListPrices.Price(pu.Usage, Designs(r)[0])
		if err != nil {
			return v, err
		}
		totals = append(totals, fmt.Sprintf("%s on %s", usd(c.Total()*1e6), timerLabel(pu.Timer)))
	}
	v.ExpireTotals = strings.Join(totals, ", ")
	return v, nil
}

func renderDoc(name string, r Report) (string, error) {
	v, err := newDocView(r)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = docTemplate.ExecuteTemplate(&b, name, v)
	return b.String(), err
}

// RenderDoc renders docs/PERFORMANCE.md from one run.
func RenderDoc(r Report) (string, error) { return renderDoc("doc", r) }

// TaskCostSection is the doc's section "Cost per 1M task lifecycles, per
// timer" (cmd/bench -only cost prints it).
func TaskCostSection(r Report) (string, error) { return renderDoc("taskcost", r) }
