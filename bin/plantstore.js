#!/usr/bin/env node
// The package's `plantstore` command: the bundle that `npm pack` builds into dist/service/ (its prepack). The
// command is this file, which exists before that build, so npm finds it whenever it reads package.json (publishing
// from a clean clone used to warn "No bin file found at dist/service/plantstore.js").
import '../dist/service/plantstore.js';
