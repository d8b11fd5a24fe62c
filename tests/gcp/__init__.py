"""Tests of the Google Cloud adapters, deploy.sh and infra/ (a package, so its conftest is gcp.conftest)."""
