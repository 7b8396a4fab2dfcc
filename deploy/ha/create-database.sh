#!/bin/sh
# Patroni's post_bootstrap: the application's database, owned by its user (run once, on the first primary).
set -e
psql -d "$1" -v ON_ERROR_STOP=1 -c "create database bindery owner bindery"
