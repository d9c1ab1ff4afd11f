package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// floorServices are the services the floor can link (one svc_<name>.go
// file each in refs/floor).
var floorServices = []string{"cognitoidentityprovider", "dynamodb", "lambda", "scheduler", "secretsmanager", "sesv2", "sfn", "sns", "sqs"}

// Every lambdas/* main is compared with a floor of exactly the clients it
// links: FunctionClients must name each main, and each main's service
// packages (less the config package's own) must be its entry; the floor
// must be able to link each of them (svc_<name>.go with its tag).
func TestFunctionClientsMatchTheMains(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(goBin, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`, "./lambdas/...")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const svc = "github.com/aws/aws-sdk-go-v2/service/"
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		fn := filepath.Base(f[0])
		seen[fn] = true
		var got []string
		for _, d := range f[1:] {
			name, ok := strings.CutPrefix(d, svc)
			if ok && !strings.Contains(name, "/") && !ConfigServices[name] {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		want, listed := FunctionClients[fn]
		if !listed {
			t.Errorf("lambdas/%s is not in FunctionClients: add it with its clients %v", fn, got)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("lambdas/%s links the clients %v; FunctionClients says %v", fn, got, want)
		}
		for _, c := range got {
			if !slices.Contains(floorServices, c) {
				t.Errorf("lambdas/%s uses %s, which the floor cannot link: add refs/floor/svc_%s.go and list it in floorServices", fn, c, c)
			}
		}
	}
	for fn := range FunctionClients {
		if !seen[fn] {
			t.Errorf("FunctionClients names %s, which is not a lambdas/* main", fn)
		}
	}
	for _, c := range floorServices {
		b, err := os.ReadFile(filepath.Join("refs", "floor", "svc_"+c+".go"))
		if err != nil {
			t.Errorf("floor service %s: %v", c, err)
			continue
		}
		if !strings.HasPrefix(string(b), "//go:build floor_"+c+"\n") {
			t.Errorf("refs/floor/svc_%s.go must start with //go:build floor_%s", c, c)
		}
	}
}

func TestFloorNames(t *testing.T) {
	if got := FloorName([]string{"sns", "dynamodb"}); got != "floor: dynamodb+sns" {
		t.Errorf("FloorName = %q", got)
	}
	if got := FloorTags([]string{"sns", "dynamodb"}); got != "floor_dynamodb,floor_sns" {
		t.Errorf("FloorTags = %q", got)
	}
	if got := FunctionFloor("presignup"); got != RefBare {
		t.Errorf("presignup's floor = %q, want bare (it calls no AWS API)", got)
	}
	if got := FunctionFloor("api"); got != "floor: dynamodb+scheduler+secretsmanager+sns" {
		t.Errorf("api's floor = %q", got)
	}
	sets := FloorSets([]string{"api", "notify", "postauth", "presignup"})
	if len(sets) != 2 {
		t.Errorf("FloorSets = %v, want api's and the notify/postauth set", sets)
	}
}
