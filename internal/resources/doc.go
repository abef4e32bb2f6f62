// Package resources implements the provider's managed resources and their
// list resources.
//
// Every resource has the same files: <name>_resource.go (type, CRUD, import,
// identity), <name>_schema.go, <name>_model.go (model <-> Kubernetes object:
// one function builds the state import and list both store), <name>_plan.go
// (ValidateConfig, ModifyPlan), <name>_list.go, and tests beside them.
// Shared pieces live once: common.go (attributes and helpers every resource
// uses), identity.go (resource identity and the import prologue), list.go
// (cluster scope and result streaming), managed_fields.go (who owns a
// field), plan_apply_check.go (the plan-time dry-run apply).
//
// One model idiom: a model is a struct of framework value types (types.String,
// types.List, types.Object, ...) with tfsdk tags, and a nested object is a
// types.Object read and written through a small tfsdk struct with As and
// ObjectValueFrom. Plain Go types cannot hold an unknown value, and a plan can
// carry one at any depth (a value another resource computes at apply), so
// only framework types read every plan. Attribute types for null and new
// object values come from the schema, never from hand-kept maps that drift.
package resources
