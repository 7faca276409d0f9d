package cel

import (
	"flag"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain silences the admission plugins' informer and refresh logs.
func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	if os.Getenv("CEL_KLOG") == "" {
		klog.SetOutput(io.Discard)
	} else {
		_ = fs.Set("logtostderr", "true")
		_ = fs.Set("v", "2")
	}
	os.Exit(m.Run())
}
