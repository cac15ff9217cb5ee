"""Vendored tinyjson 0.9 (upstream tests kept in tests/)."""
