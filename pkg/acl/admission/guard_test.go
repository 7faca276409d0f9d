package admission

import (
	"bytes"
	"strings"
	"testing"
)

// guardRequests are, per part of the guard, a request YuniKorn admits and
// the part refuses.
func guardRequests(t *testing.T) map[GuardPart]request {
	ui := map[string]string{UserInfoAnnotation: `{"user":"boss"}`}
	mine := map[string]string{UserInfoAnnotation: `{"user":"alice"}`}
	label := map[string]string{LabelUsername: "boss", labelApp: yunikornPod}
	rc := workload(kindDeployment, ui, nil)
	rc["apiVersion"], rc["kind"] = "v1", kindReplicationController
	return map[GuardPart]request{
		GuardUsernameLabel: {kind: kindPod, user: "alice", object: obj(t, pod(nil, label))},
		GuardPodUpdate: {kind: kindPod, op: "UPDATE", user: "alice",
			object: obj(t, pod(ui, map[string]string{labelApp: yunikornPod})), oldObject: obj(t, pod(mine, nil))},
		GuardReplicationControllers: {kind: kindReplicationController, user: "alice", object: obj(t, rc)},
		GuardWorkloadUpdate: {kind: kindDeployment, op: "UPDATE", user: "alice",
			object: obj(t, workload(kindDeployment, ui, nil)), oldObject: obj(t, workload(kindDeployment, mine, nil))},
		GuardFilteredWorkloads: {kind: kindDeployment, namespace: "kube-system", user: "alice", object: obj(t, workload(kindDeployment, ui, nil))},
	}
}

// TestGuardPartRefusesWhatYuniKornAdmits: each part refuses its hole,
// naming itself; turned off, the guard answers as YuniKorn does.
func TestGuardPartRefusesWhatYuniKornAdmits(t *testing.T) {
	for part, r := range guardRequests(t) {
		t.Run(string(part), func(t *testing.T) {
			body := r.body(t)
			yk := decodeResponse(t, DefaultSettings().Review(body, nil))
			if !yk.Allowed {
				t.Fatalf("YuniKorn refuses it: %v", yk.Result)
			}
			on := decodeResponse(t, DefaultSettings().Guard(body, nil))
			if on.Allowed || !strings.Contains(on.Result.Message, "aclc guard "+string(part)+":") {
				t.Fatalf("guard admits it or names another part: %+v", on)
			}
			off := DefaultSettings().WithGuardOff([]GuardPart{part}).Guard(body, nil)
			if want := DefaultSettings().Review(body, nil); !bytes.Equal(off, want) {
				t.Fatalf("with %s off: got %s, want YuniKorn's %s", part, off, want)
			}
		})
	}
}

// TestGuardFollowsWhoMayChooseAnIdentity: a requester YuniKorn allows to
// set user.info passes every part.
func TestGuardFollowsWhoMayChooseAnIdentity(t *testing.T) {
	st := SettingsFromMap(map[string]string{KeyExternalUsers: "^alice$"})
	for part, r := range guardRequests(t) {
		if part == GuardPodUpdate {
			continue // nobody may change user.info on a pod, as in YuniKorn
		}
		t.Run(string(part), func(t *testing.T) {
			if got := decodeResponse(t, st.Guard(r.body(t), nil)); !got.Allowed {
				t.Fatalf("refused: %v", got.Result)
			}
		})
	}
}

func TestParseGuardOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want string
		err  string
	}{
		{"none", nil, "", ""},
		{"a list, in the guard's order", []string{"workload-update,username-label"}, "username-label,workload-update", ""},
		{"all", []string{"all"}, "username-label,pod-update,replication-controllers,workload-update,filtered-workloads", ""},
		{"empty items skipped", []string{" , pod-update ,"}, "pod-update", ""},
		{"unknown name", []string{"labels"}, "", `unknown guard part "labels": valid are all, username-label`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGuardOff(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			var names []string
			for _, p := range got {
				names = append(names, string(p))
			}
			if err != nil || strings.Join(names, ",") != tc.want {
				t.Fatalf("got %v, %v; want %s", names, err, tc.want)
			}
		})
	}
}
