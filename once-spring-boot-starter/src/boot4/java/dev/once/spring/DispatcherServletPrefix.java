package dev.once.spring;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletPath;
import org.springframework.util.ClassUtils;

/**
 * The prefix of Spring MVC's {@code DispatcherServlet} path, which {@link IdempotentHandlers} puts
 * before every handler's pattern. One copy per Boot line because {@link DispatcherServletPath}
 * moved: Boot 4 has it in spring-boot-webmvc, Boot 3 in spring-boot-autoconfigure (src/boot3/java).
 */
final class DispatcherServletPrefix {

  private static final boolean BOOT_WEBMVC =
      ClassUtils.isPresent(
          "org.springframework.boot.webmvc.autoconfigure.DispatcherServletPath",
          DispatcherServletPrefix.class.getClassLoader());

  private DispatcherServletPrefix() {}

  /**
   * {@code ""} when the servlet is mapped to {@code /} or there is no such bean (nor, on Boot 4,
   * spring-boot-webmvc, which an application with Spring MVC may do without).
   */
  static String of(BeanFactory beans) {
    return BOOT_WEBMVC ? Lookup.prefix(beans) : "";
  }

  /** Apart, so that {@link DispatcherServletPath} is loaded only when it is there. */
  private static final class Lookup {
    static String prefix(BeanFactory beans) {
      return beans
          .getBeanProvider(DispatcherServletPath.class)
          .getIfAvailable(() -> () -> "/")
          .getPrefix();
    }
  }
}
