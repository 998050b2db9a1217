package dev.once.spring;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletPath;

/**
 * The prefix of Spring MVC's {@code DispatcherServlet} path, which {@link IdempotentHandlers} puts
 * before every handler's pattern. One copy per Boot line because {@link DispatcherServletPath}
 * moved: Boot 3 has it in spring-boot-autoconfigure, Boot 4 in spring-boot-webmvc (src/boot4/java).
 */
final class DispatcherServletPrefix {

  private DispatcherServletPrefix() {}

  /** {@code ""} when the servlet is mapped to {@code /} or there is no such bean. */
  static String of(BeanFactory beans) {
    return beans
        .getBeanProvider(DispatcherServletPath.class)
        .getIfAvailable(() -> () -> "/")
        .getPrefix();
  }
}
