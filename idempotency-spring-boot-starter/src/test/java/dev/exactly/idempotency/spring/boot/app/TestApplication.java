package dev.exactly.idempotency.spring.boot.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small payment-like API whose routes the starter guards (configured by properties, see
 * application.properties); the tests drive it over real HTTP. Its beans are in {@link TestBeans}.
 */
@SpringBootApplication
public class TestApplication {}
