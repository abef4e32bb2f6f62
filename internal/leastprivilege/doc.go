// Package leastprivilege holds the acceptance tests that prove the
// least-privilege table of internal/rbac against the code: the manifests of
// examples/rbac are applied unchanged to clusters of their layout (the
// operator's, the Helm chart's), every resource, data source, list resource
// and action runs with the token of the ServiceAccount they create and bind
// and nothing else, and each rule of the table, taken out in turn, makes the
// operation that needs it fail at once with an error naming the verb, the
// resource, the object and the cluster.
package leastprivilege
