package dev.once.spring.shop;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small shop whose controllers exercise the starter; nothing in it knows about idempotency but
 * the annotations.
 */
@SpringBootApplication
public class FakeShopApplication {}
