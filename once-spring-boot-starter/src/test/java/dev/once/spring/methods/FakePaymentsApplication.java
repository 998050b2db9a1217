package dev.once.spring.methods;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A service application without a web server: {@code @Idempotent} methods on plain beans. */
@SpringBootApplication
public class FakePaymentsApplication {}
