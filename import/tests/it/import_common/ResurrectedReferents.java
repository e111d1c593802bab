import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;

/**
 * What HotSpot does with a SoftReference (and a WeakReference) reachable
 * only from an object that is finalizable and unreachable: after a GC, the
 * finalizer looks at the reference and prints whether the referent survived.
 * Run with -XX:SoftRefLRUPolicyMSPerMB=<large> (soft references kept) and
 * =0 (cleared), e.g. with -XX:+UseParallelGC.
 */
public class ResurrectedReferents {
    static volatile String soft = "pending";
    static volatile String weak = "pending";

    static final class Holder {
        final SoftReference<Object> softRef;
        final WeakReference<Object> weakRef;

        Holder() {
            softRef = new SoftReference<>(new int[16]);
            weakRef = new WeakReference<>(new int[16]);
        }

        @Override
        protected void finalize() {
            soft = softRef.get() != null ? "kept" : "cleared";
            weak = weakRef.get() != null ? "kept" : "cleared";
        }
    }

    static void make() {
        new Holder();
    }

    public static void main(String[] args) throws Exception {
        make();
        for (int i = 0; i < 50 && soft.equals("pending"); i++) {
            System.gc();
            Thread.sleep(20);
        }
        System.out.println("soft " + soft + ", weak " + weak);
    }
}
