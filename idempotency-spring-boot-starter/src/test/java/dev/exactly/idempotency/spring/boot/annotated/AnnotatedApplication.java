package dev.exactly.idempotency.spring.boot.annotated;

import dev.exactly.idempotency.spring.boot.app.TestBeans;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

/** The test API again, its routes declared only with {@code @Idempotent} (configuration: annotated.properties). */
@SpringBootApplication
@Import(TestBeans.class)
public class AnnotatedApplication {}
