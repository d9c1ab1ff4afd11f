package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// InstallRIE returns the path of the Lambda Runtime Interface Emulator in
// root/bin, installing it there first (go install RIEModule, from the Go
// module proxy) when it is absent.
func InstallRIE(goBin, root string) (string, error) {
	rie := filepath.Join(root, "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err == nil {
		return rie, nil
	}
	cmd := exec.Command(goBin, "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(root, "bin"), "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", RIEModule, err, b)
	}
	return rie, nil
}
