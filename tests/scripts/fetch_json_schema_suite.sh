#!/usr/bin/env bash
# The official JSON-Schema-Test-Suite, draft 2020-12, as shipped inside PyPI's
# jsonschema 4.26.0 sdist (json/tests/draft2020-12/), extracted to
# .cache/json-schema-test-suite/draft2020-12/ for tests/json_schema_suite.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.cache/json-schema-test-suite
[ -d "$OUT/draft2020-12" ] && exit 0
mkdir -p .cache/jsonschema-sdist "$OUT"
[ -f .cache/jsonschema-sdist/jsonschema-4.26.0.tar.gz ] ||
  pip download --no-binary :all: --no-deps jsonschema==4.26.0 -d .cache/jsonschema-sdist -q
tar -xzf .cache/jsonschema-sdist/jsonschema-4.26.0.tar.gz -C "$OUT" --strip-components=3 \
  jsonschema-4.26.0/json/tests/draft2020-12
ls "$OUT/draft2020-12" | wc -l
