package builtins

// UserRegExp is the user name rule, for the test that pins it to
// pkg/acl/yunikorn's (which imports this package).
var UserRegExp = userRegExp
