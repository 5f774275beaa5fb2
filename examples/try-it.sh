#!/usr/bin/env bash
# The README's walk-through of a Spring Boot app with Exactly: run it against the example application
# (spring-boot-redis or spring-boot-postgres) started on localhost:8080. Each example's test runs these
# commands and checks what each comment says it answers.

# a charge: 201, and the handler runs
curl -i http://localhost:8080/v1/charges \
  -H 'Authorization: Bearer sk_test_4f9a2c' \
  -H 'Idempotency-Key: order-1042' \
  -H 'Content-Type: application/json' \
  -d '{"amount":1000,"currency":"EUR"}'

# the same request again, as a retry: 201, the same body, Idempotent-Replayed: true; the handler does not run
curl -i http://localhost:8080/v1/charges \
  -H 'Authorization: Bearer sk_test_4f9a2c' \
  -H 'Idempotency-Key: order-1042' \
  -H 'Content-Type: application/json' \
  -d '{"amount":1000,"currency":"EUR"}'

# the same key with another amount: 422 idempotency_key_reused
curl -i http://localhost:8080/v1/charges \
  -H 'Authorization: Bearer sk_test_4f9a2c' \
  -H 'Idempotency-Key: order-1042' \
  -H 'Content-Type: application/json' \
  -d '{"amount":2000,"currency":"EUR"}'

# no API key, so no tenant: 401 tenant_unresolved
curl -i http://localhost:8080/v1/charges \
  -H 'Idempotency-Key: order-1042' \
  -H 'Content-Type: application/json' \
  -d '{"amount":1000,"currency":"EUR"}'

# no Idempotency-Key: 400 idempotency_key_missing
curl -i http://localhost:8080/v1/charges \
  -H 'Authorization: Bearer sk_test_4f9a2c' \
  -H 'Content-Type: application/json' \
  -d '{"amount":1000,"currency":"EUR"}'

# a refund, on the route whose duplicates wait (up to 10 s) for the first one's answer: 201
curl -i http://localhost:8080/v1/charges/ch_1/refunds \
  -H 'Authorization: Bearer sk_test_4f9a2c' \
  -H 'Idempotency-Key: refund-7' \
  -H 'Content-Type: application/json' \
  -d '{"amount":250}'

# the health, with the idempotency store's component: 200
curl -i http://localhost:8080/actuator/health
