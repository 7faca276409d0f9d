package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterConfigReviewLockOut drives /validate-config through the API
// server with configurations YuniKorn accepts and aclc cannot judge in
// time or cannot load: none is refused for it, and with one in service a
// change YuniKorn refuses is still refused and the revert admitted. Its
// own API server: the webhook compiles a 128,700-queue configuration put
// in service, which takes memory and time the other runs measure.
func TestClusterConfigReviewLockOut(t *testing.T) {
	aclc, s, adm, _ := startCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	kcACLC, _ := aclcIdentity(t, ctx, s, adm, os.Getenv("ACLC_HELM"))
	_, whURL, whClient, caPEM := startWebhook(t, dir, aclc, kcACLC)
	registerConfigWebhook(t, ctx, adm, whURL, caPEM)
	warnedAdm, warned := s.warned(t, admin)
	api := warnedAdm.CoreV1().ConfigMaps(yunikornNS)
	update := func(queues string) error {
		cm, err := api.Get(ctx, "yunikorn-configs", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["queues.yaml"] = queues
		_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	refused := fmt.Sprintf("admission webhook %q denied the request: duplicate child name found with name 'Test', level 1", configWebhookName)
	// A configuration YuniKorn accepts whose anchors expand to
	// 128,700 queues: admitted, judged in time or not.
	if err := update(aliasedQueues(13, false)); err != nil {
		t.Fatalf("128,700 queues YuniKorn accepts: %v", err)
	}
	t.Logf("128,700 queues: %q", warned.take())
	// A dry-run of a change YuniKorn refuses, refused once the webhook
	// is done with what came before (one candidate at a time).
	refusedDry := func(what string) {
		eventually(t, 120*time.Second, what, func() error {
			cm, err := api.Get(ctx, "yunikorn-configs", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["queues.yaml"] = queuesV1 + "          - name: Test\n"
			_, err = api.Update(ctx, cm, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil || !strings.Contains(err.Error(), refused) {
				return fmt.Errorf("a duplicate queue: %v", err)
			}
			return nil
		})
		warned.take()
	}
	refusedDry("the config webhook judges again after 128,700 queues")
	// One over what aclc reads: admitted unchecked; then, with it in
	// service (aclc cannot load it), a change YuniKorn refuses is
	// still refused and the revert is admitted.
	if err := update(aliasedQueues(45, true)); err != nil {
		t.Fatalf("a configuration over aclc's bound: %v", err)
	}
	if got := strings.Join(warned.take(), "\n"); !strings.Contains(got, "admitted unchecked") && !strings.Contains(got, "was not checked, admitted") {
		t.Errorf("no warning that the change was not checked:\n%s", got)
	}
	eventually(t, 120*time.Second, "the webhook fails to load the configuration in service", func() error {
		return wantBody(whClient, whURL+"/readyz", "serving the last good configuration: the last reload failed:")
	})
	refusedDry("a duplicate queue refused while aclc cannot load the configuration in service")
	if err := update(queuesV1); err != nil {
		t.Fatalf("the revert of a configuration aclc cannot load: %v", err)
	}
	if got := strings.Join(warned.take(), "\n"); !strings.Contains(got, "what it changes is not shown: the configuration in service does not load") {
		t.Errorf("the revert's warnings do not say the configuration in service does not load:\n%s", got)
	}
}

// aliasedQueues is a queues.yaml whose anchors expand to 13 x 99 x 100 =
// 128,700 leaf queues under root.test, the leaves of the first literal
// parents written out (the YAML library, and YuniKorn, refuse a text where
// more than 99% of the nodes come from aliases). With acl, each leaf has
// a submitacl: more YAML nodes than aclc reads, which YuniKorn accepts.
func aliasedQueues(literal int, acl bool) string {
	var b strings.Builder
	b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: test\n            submitacl: alice\n            queues:\n")
	for top := 0; top < 13; top++ {
		fmt.Fprintf(&b, "              - name: t%02d\n", top)
		if top > 0 {
			b.WriteString("                queues: *mid\n")
			continue
		}
		b.WriteString("                queues: &mid\n")
		for mid := 0; mid < 99; mid++ {
			fmt.Fprintf(&b, "                  - name: m%02d\n", mid)
			switch {
			case mid == 0:
				b.WriteString("                    queues: &leaves\n")
			case mid < literal:
				b.WriteString("                    queues:\n")
			default:
				b.WriteString("                    queues: *leaves\n")
				continue
			}
			for leaf := 0; leaf < 100; leaf++ {
				if acl {
					fmt.Fprintf(&b, "                      - {name: l%02d, submitacl: u%d}\n", leaf, leaf)
				} else {
					fmt.Fprintf(&b, "                      - name: l%02d\n", leaf)
				}
			}
		}
	}
	return b.String()
}
