// Package si mirrors the one type of YuniKorn's scheduler interface that the
// admission controller marshals and unmarshals: UserGroupInformation.
//
// It exists so that encoding/json names the type exactly as it does for
// YuniKorn: the package clause must be "si" and the type name
// UserGroupInformation, because decode errors read
// "json: cannot unmarshal ... into Go value of type si.UserGroupInformation".
//
// See https://github.com/apache/yunikorn-scheduler-interface (lib/go/si)
package si

// UserGroupInformation carries the JSON shape of the generated protobuf
// message si.UserGroupInformation: the generated struct's other fields are
// unexported or tagged json:"-", so only user and groups take part in JSON.
type UserGroupInformation struct {
	User   string   `json:"user,omitempty"`
	Groups []string `json:"groups,omitempty"`
}
