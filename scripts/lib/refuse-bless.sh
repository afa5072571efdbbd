# Sourced by scripts/test.sh (and tested on its own by tests/cli_hardening.rs): LACUNA_BLESS=1
# rewrites the golden files instead of checking them, so a test run with it set would pass
# whatever the code does. Any value is refused here; only `1` blesses, one test at a time.
if [ -n "${LACUNA_BLESS+set}" ]; then
  echo "error: LACUNA_BLESS is set; unset it to test (bless one test at a time: see traces/README.md)" >&2
  exit 2
fi
