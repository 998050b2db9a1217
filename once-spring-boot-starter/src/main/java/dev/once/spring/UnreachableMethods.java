package dev.once.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.ProxyConfig;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Refuses at startup an {@code @Idempotent(key = ...)} method that no call can reach through the
 * bean's proxy: the advice runs only for calls through it, so such a method would run unguarded on
 * every call, without a word.
 *
 * <p>It looks at each bean after the auto-proxy creator did (that one runs first, at the highest
 * precedence; this one last), so it judges the object the application will call: a subclass proxy
 * (CGLIB) reaches no {@code static}, {@code private} or {@code final} method; an interface proxy
 * (JDK, {@code spring.aop.proxy-target-class=false}) reaches only what an interface declares; and
 * in an application without an auto-proxy creator no bean is proxied at all. A final class is
 * refused before the proxy creator tries to subclass it.
 */
final class UnreachableMethods implements BeanPostProcessor, BeanFactoryAware, Ordered {

  private @Nullable BeanFactory beans;

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beans = beanFactory;
  }

  /**
   * A final class stops startup here, before the auto-proxy creator fails to subclass it with a
   * message that names neither the annotation nor the method.
   */
  @Override
  public Object postProcessBeforeInitialization(Object bean, String beanName) {
    Class<?> type = ClassUtils.getUserClass(bean);
    if (Modifier.isFinal(type.getModifiers()) && proxiesBySubclassing()) {
      List<Method> keyed = keyedMethods(type);
      if (!keyed.isEmpty()) {
        throw refusal(
            keyed.get(0),
            "its class is final, and Spring proxies beans by subclassing them (CGLIB,"
                + " spring.aop.proxy-target-class=true), which a final class forbids; make the"
                + " class non-final");
      }
    }
    return bean;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    for (Method method : keyedMethods(ClassUtils.getUserClass(AopUtils.getTargetClass(bean)))) {
      String why = unreachable(method, bean, proxyCreator() != null);
      if (why != null) {
        throw refusal(method, why + ", so every call would run unguarded");
      }
    }
    return bean;
  }

  /** The {@code @Idempotent(key = ...)} methods of {@code type} and its superclasses. */
  private static List<Method> keyedMethods(Class<?> type) {
    if (!AnnotationUtils.isCandidateClass(type, Idempotent.class)) {
      return List.of();
    }
    List<Method> keyed = new ArrayList<>();
    for (Method method :
        ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
      Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
      // Without a key it is an HTTP handler's annotation: the filter applies it, not a proxy.
      if (annotation != null && !annotation.key().isEmpty()) {
        keyed.add(method);
      }
    }
    return keyed;
  }

  private static InvalidOncePropertyException refusal(Method method, String why) {
    return new InvalidOncePropertyException(
        "@Idempotent(key) on "
            + ClassUtils.getUserClass(method.getDeclaringClass()).getSimpleName()
            + "#"
            + method.getName(),
        null,
        why);
  }

  /** Whether the application's auto-proxy creator proxies classes rather than interfaces. */
  private boolean proxiesBySubclassing() {
    ProxyConfig creator = proxyCreator();
    return creator != null && creator.isProxyTargetClass();
  }

  /** The auto-proxy creator every Spring advisor shares, or null if the application has none. */
  private @Nullable ProxyConfig proxyCreator() {
    BeanFactory b = beans;
    return b != null && b.containsBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME)
        ? b.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME, ProxyConfig.class)
        : null;
  }

  /**
   * Why no call through {@code bean} reaches {@code method}, or null if calls do.
   *
   * @param anyProxyCreator whether the application has an auto-proxy creator: a bean it left alone
   *     is then no proof of a problem (a test's mock, registered as it is), only a bean with none
   */
  static @Nullable String unreachable(Method method, Object bean, boolean anyProxyCreator) {
    int modifiers = method.getModifiers();
    if (Modifier.isStatic(modifiers)) {
      return "a static method is not called through the bean's proxy; make it an instance method";
    }
    if (Modifier.isPrivate(modifiers)) {
      return "a private method cannot be intercepted by the bean's proxy; make it public and call"
          + " it from another bean";
    }
    if (AopUtils.isJdkDynamicProxy(bean)) {
      return declaredByAnInterface(bean.getClass(), method)
          ? null
          : "the bean is proxied through its interfaces (spring.aop.proxy-target-class=false),"
              + " none of which declares the method; declare it on one, or proxy the class";
    }
    if (Modifier.isFinal(modifiers)) {
      return "a final method cannot be overridden by the bean's proxy (a subclass); remove final";
    }
    if (!anyProxyCreator && !AopUtils.isAopProxy(bean)) {
      return "the bean is not proxied: the application has no auto-proxy creator"
          + " (spring.aop.auto=false, or spring.aop.proxy-target-class=false without AspectJ, leave"
          + " Spring Boot none)";
    }
    return null;
  }

  private static boolean declaredByAnInterface(Class<?> proxy, Method method) {
    for (Class<?> i : proxy.getInterfaces()) {
      if (ClassUtils.hasMethod(i, method.getName(), method.getParameterTypes())) {
        return true;
      }
    }
    return false;
  }
}
