// Package resources implements the provider's managed resources and their
// list resources.
//
// Every resource has the same files: <name>_resource.go (type, CRUD, import,
// identity), <name>_schema.go, <name>_model.go (model <-> Kubernetes object:
// one function builds the state import and list both store), <name>_plan.go
// (ValidateConfig, ModifyPlan), <name>_list.go, and tests beside them. Four
// further suffixes hold one self-contained mechanism each, where a resource
// has it:
//   - <name>_operator.go: the contract with the operator whose controller
//     acts on the object (istio_csr: the cert-manager Operator;
//     spire_federation: the Zero Trust Workload Identity Manager): when an
//     apply may end on the controller's status, and what a destroy removes
//     that the controller leaves behind. Each rule names the controller
//     function it follows; the stand-ins in internal/standin follow the
//     same functions.
//   - <name>_fastpath.go: the resource's fast path for internal/fastpath
//     (the resources held by the hundred: federated_trust_domain,
//     cluster_spiffe_id, spire_bundle), whose hooks (how to identify,
//     refresh and plan its model) serve its Read, ModifyPlan and
//     ValidateConfig too. On the skeleton (kube_resource.go) the hooks are
//     kubeResource's Identity, Refresh and Plan, with the descriptor's plan
//     and, where a refresh says something once per walk, refreshing
//     (federated_trust_domain's, in this file). Their acceptance tests share
//     the comparer of every fast answer with the framework's
//     (fastpath_compare_test.go).
//   - <name>_unset.go: istio_csr's plan modifier for unset Optional+Computed
//     attributes, fed by the field ownership kept in private state.
//   - <name>_spire.go: federated_trust_domain's spire_trust, what the
//     cluster's SPIRE server does with the object (relationship, peer
//     bundle), asked of SPIRE through spire_walk.go, and its repair.
//
// A file that would grow past 550 lines is split by concern under a further
// suffix: istio_csr_cluster_checks.go (the plan-time checks that ask the
// cluster) and istio_csr_schema_agent.go (the schema of the agent's pod).
// A name declared in a resource's files (function, constant, variable or
// type, exported or not) is that resource's alone; one a second resource or
// a shared file needs moves to a shared file below. internal/conventions
// checks both rules.
//
// Test files say which make target runs them: <file>_test.go holds
// acceptance tests (TestAcc*, `make testacc`, package resources_test) and
// their helpers, <file>_unit_test.go unit tests (every other name, `make
// unit`, mostly package resources). internal/conventions checks the suffixes.
//
// One naming scheme, <thing> being the resource's name in camel case:
// <thing>Resource and New<Thing>Resource; <thing>ResourceModel;
// <thing>Type, the resource type's descriptor in _resource.go: a typeInfo
// (its type name from internal/typename, Kubernetes kinds, identity shape
// and import ID form) and, for a resource that manages one Kubernetes
// object of one kind, the kubeType around it (kube_resource.go: where the
// model holds id and object name, fromObject and refresh, and the hooks of
// what the type does its own way), from which kubeResource serves Read,
// ImportState, Delete (deleting), the plan's prologue (planned: cluster
// check, completing, id, refusal of a Helm release's object), the plan and
// client an apply starts from (applying), a create's refusal of an object
// this configuration did not create (refuseForeign), the state and
// identity an apply stores (store) and the list results (listed,
// listedWhere for a list's filters). A resource on the skeleton declares
// none of its methods; internal/conventions checks it. The others (mesh_trust_domain, spire_bundle, spire_federation)
// keep a <thing>ObjectIdentity, the objectIdentity of the object. No helper
// returns the id attribute as a string: it is resourceID(cluster, key)
// where it is set.
// <thing>ObjectFromModel (what an apply sends), <thing>StateFromObject (the
// state import and list store) and set<Thing>FromObject (a refresh into an
// existing model), in _model.go. spire_federation goes through federationSpec
// (specFromModel, specFromObject, setModel), because the SpireServer's
// federation is one field of an object this provider does not own.
// cluster_spiffe_id's model embeds clusterspiffeid.Spec, the one mapping of
// the ClusterSPIFFEID's spec (its attributes, ObjectFromSpec,
// Spec.SetFromObject), which the data source zerotrust_cluster_spiffe_id
// reads with too; its model functions add what only the resource holds.
// What spire-controller-manager refuses of a spec by itself (templates that
// do not render, selector requirements) is there too (clusterspiffeid.Validate,
// RenderTemplate, RenderSPIFFEID).
// spire_bundle manages no Kubernetes object but a bundle in SPIRE's
// datastore: spireBundleStateFromBundle and setSpireBundleFromView read what
// SPIRE holds, its identity names the trust domain (identityShape.key), and
// its list resource asks SPIRE (listShell.withLister).
//
// Shared pieces live once: registry.go (registry, the one list of what the
// provider serves, which All, Lists and FastPaths read), typeinfo.go (the
// per-type descriptor, Metadata, IdentitySchema and the one import ID
// parser), kube_resource.go (the skeleton of a single-kind Kubernetes
// resource), plan_reach.go (planLookup, the one way a plan-time check gets
// its cluster and its time bound, and what a plan says of a cluster that
// does not answer), common.go (attributes and
// helpers every resource uses), identity.go (resource identity and the
// import prologue), list.go (the list resource shell, cluster scope and
// result streaming), ownership.go (who wrote an object or field, the
// private-state record of held fields and the names of those fields,
// releasing them), helm_owned.go
// (objects a Helm release owns: refused to a create, an import and
// adoption, marked in list results), managed_fields.go
// (decoding managedFields), object_fields.go (reading fields of unstructured
// objects, status conditions in messages), values.go (framework collections
// and nested objects to Go values and back), plan_apply_check.go (the
// plan-time dry-run apply), spire_walk.go (what a SPIRE server holds, asked
// once per server and walk for every resource of the cluster: its
// federation relationships and bundles, its entries; and how long after an
// apply SPIRE's side is still on its way, spireTrustPending), workload_federation.go
// (what cluster_spiffe_id and cluster_spiffe_id_federation share: the
// plan-time checks of federates_with, how an apply starts, the wait until
// the workloads federate), spire_class.go (what cluster_spiffe_id and
// federated_trust_domain share: the plan-time check that a controller serves
// a class_name other than the cluster's), federation_sources.go (what
// federated_trust_domain and spire_federation share: one federation
// relationship declared through SPIRE's API or in its configuration file,
// never both; the plan's refusal and its warnings of the other source on the
// cluster).
//
// One model idiom: a model is a struct of framework value types (types.String,
// types.List, types.Object, ...) with tfsdk tags, and a nested object is a
// types.Object read and written through a small tfsdk struct (objectAs and
// objectFrom, over As and ObjectValueFrom). Plain Go types cannot hold an
// unknown value, and a plan can carry one at any depth (a value another
// resource computes at apply), so only framework types read every plan. Attribute types for null and new
// object values come from the schema, never from hand-kept maps that drift.
// Values an operator rewrites in another spelling use a type with semantic
// equality (internal/durationtype, internal/quantitytype). One exception to reading models through
// the framework: federated_trust_domain's hot paths (Read, ModifyPlan,
// ValidateConfig, run for every instance of every plan) convert its model
// with internal/fastpath's codec, which resolves the fields once instead of
// per call.
package resources
