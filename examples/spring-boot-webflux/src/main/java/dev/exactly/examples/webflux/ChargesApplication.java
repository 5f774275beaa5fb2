package dev.exactly.examples.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A reactive payment API whose routes are declared idempotent on the controller (see ChargeController). */
@SpringBootApplication
public class ChargesApplication {
    public static void main(String[] args) {
        SpringApplication.run(ChargesApplication.class, args);
    }
}
