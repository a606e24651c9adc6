package goanalysis

import (
	"go/types"

	"golang.org/x/tools/go/packages"
)

// slimDependencies drops, of the type information of the packages
// outside the repository (under root), all but the objects their
// declarations define, once every package is type-checked: the types of
// their expressions, the uses of names, the selections and the scopes.
// No analyzer reads them: on those packages the checker runs only the
// deprecation facts (outside.go), which look up declared names, and an
// analyzer of a changed package sees its own package's information
// only. Together with the loose comments (dropLooseComments) they were
// a quarter of the live heap after loading a change to caddy, carried
// through the whole analysis (docs/performance.md).
func slimDependencies(pkgs []*packages.Package, root string) {
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.TypesInfo == nil || inside(root, firstFile(p)) {
			return
		}
		p.TypesInfo = &types.Info{Defs: p.TypesInfo.Defs}
	})
}
