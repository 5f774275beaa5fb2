package dev.exactly.examples.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A payment API whose charge and refund routes Exactly's starter guards (see application.properties). */
@SpringBootApplication
public class ChargesApplication {
    public static void main(String[] args) {
        SpringApplication.run(ChargesApplication.class, args);
    }
}
