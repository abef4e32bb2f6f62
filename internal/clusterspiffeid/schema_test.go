package clusterspiffeid

import (
	"maps"
	"slices"
	"testing"
)

// TestResourceAndDataSourceTypesAgree: the resource and the data source hold
// the same spec attributes, each of the same type, and Spec reads every one
// of them (a field Spec lacks would fail every read of either).
func TestResourceAndDataSourceTypesAgree(t *testing.T) {
	resource, dataSource := ResourceAttributes(), DataSourceAttributes()
	names := slices.Sorted(maps.Keys(resource))
	if got := slices.Sorted(maps.Keys(dataSource)); !slices.Equal(got, names) {
		t.Fatalf("the data source has the spec attributes %v, the resource %v", got, names)
	}
	for _, name := range names {
		if r, d := resource[name].GetType(), dataSource[name].GetType(); !r.Equal(d) {
			t.Errorf("%s is a %s in the resource but a %s in the data source", name, r, d)
		}
	}
}
