package leastprivilege_test

import (
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

func TestMain(m *testing.M) {
	acctest.Main(m)
}
