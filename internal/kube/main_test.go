package kube_test

import (
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestMain stops the labs the acceptance tests start (acctest.LabFor) once
// all have run.
func TestMain(m *testing.M) { acctest.Main(m) }
