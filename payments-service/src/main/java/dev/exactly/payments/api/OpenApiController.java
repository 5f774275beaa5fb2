package dev.exactly.payments.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /openapi.yaml}: the maintained OpenAPI 3.1 document of the API, without authentication. */
@RestController
public class OpenApiController {
    private static final MediaType YAML = MediaType.parseMediaType("application/yaml");
    private final byte[] document;

    public OpenApiController() {
        try (InputStream in = OpenApiController.class.getClassLoader().getResourceAsStream("openapi.yaml")) {
            if (in == null) {
                throw new IllegalStateException("openapi.yaml is missing from the class path");
            }
            document = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @GetMapping("/openapi.yaml")
    public ResponseEntity<byte[]> document() {
        return ResponseEntity.ok().contentType(YAML).body(document.clone());
    }
}
