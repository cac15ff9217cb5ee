# Build artefacts that were committed by accident (made here: the task repo itself ignores them).
set -e
mkdir -p shop/__pycache__ tests/__pycache__ dist
printf '\x6f\x0d\x0d\x0a\x00\x00\x00\x00fake-bytecode' > shop/__pycache__/settings.cpython-311.pyc
printf '\x6f\x0d\x0d\x0a\x00\x00\x00\x00fake-bytecode' > tests/__pycache__/test_settings.cpython-311-pytest-8.3.2.pyc
printf 'not really a tarball\n' > dist/shop-0.4.0.tar.gz
