package dev.once.spring.methods;

import org.springframework.stereotype.Component;

/** Keys derived by a bean, for {@code key = "@keys.of(#a0)"}. */
@Component("keys")
public class Keys {
  public String of(String batchId) {
    return "batch-" + batchId;
  }
}
