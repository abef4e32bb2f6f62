// Package leastprivilege holds the acceptance tests that prove the
// least-privilege table of internal/rbac against the code: every resource,
// data source, list resource and action runs with a ServiceAccount token
// bound only to the manifest examples/rbac/zerotrust-rbac.yaml, and each
// rule of the table, taken out in turn, makes the operation that needs it
// fail at once with an error naming the verb, the resource, the object and
// the cluster.
package leastprivilege
