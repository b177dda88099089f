// Ice for Java 3.7 client of Moraine's interop suite (scenarios_java.py builds and runs it).
//
//   java -cp CLASSES:ice-3.7.8.jar:glacier2-3.7.8.jar Client ROUTER-PROXY HELLO-PROXY USER PASSWORD
//
// Through the router: createSession, sayHello("java"), fail("kaboom") -> Demo.Boom, a twoway
// and a oneway callback through a router-attached adapter, destroySession. Like the C++
// client, it prints one line per step that worked (the scenario checks them) and exits
// non-zero, with the exception on stderr, at the first step that did not.

import Demo.Boom;
import Demo.CallbackPrx;
import Demo.HelloPrx;
import com.zeroc.Glacier2.RouterPrx;
import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.Current;
import com.zeroc.Ice.Identity;
import com.zeroc.Ice.InitializationData;
import com.zeroc.Ice.ObjectAdapter;
import com.zeroc.Ice.Util;

import java.util.ArrayList;
import java.util.List;

public class Client
{
    // Callbacks are dispatched on Ice's thread pool while main waits for them.
    static class CallbackI implements Demo.Callback
    {
        private final List<String> got = new ArrayList<>();

        @Override
        public synchronized void ping(String msg, Current current)
        {
            got.add(msg);
            notifyAll();
        }

        synchronized boolean waitFor(String msg, long timeoutMillis) throws InterruptedException
        {
            long end = System.nanoTime() + timeoutMillis * 1_000_000L;
            while(!got.contains(msg))
            {
                long left = (end - System.nanoTime()) / 1_000_000L;
                if(left <= 0)
                {
                    return false;
                }
                wait(left);
            }
            return true;
        }
    }

    static class StepFailed extends Exception
    {
        StepFailed(String what)
        {
            super(what);
        }
    }

    static void run(Communicator ic, String helloProxy, String user, String password) throws Exception
    {
        RouterPrx router = RouterPrx.checkedCast(ic.getDefaultRouter());
        if(router == null)
        {
            throw new StepFailed("checkedCast to Glacier2::Router returned null");
        }
        router.createSession(user, password);
        System.out.println("session ok");

        HelloPrx hello = HelloPrx.uncheckedCast(ic.stringToProxy(helloProxy));
        System.out.println(hello.sayHello("java"));

        try
        {
            hello.fail("kaboom");
            throw new StepFailed("fail() did not throw");
        }
        catch(Boom e)
        {
            System.out.println("boom " + e.why);
        }

        ObjectAdapter adapter = ic.createObjectAdapterWithRouter("Callback", router);
        CallbackI servant = new CallbackI();
        CallbackPrx cb = CallbackPrx.uncheckedCast(
            adapter.add(servant, new Identity("cb", router.getCategoryForClient())));
        adapter.activate();

        // The back end calls cb.ping before it replies, so the twoway callback has arrived
        // by the time callMeBack returns; the wait only bounds a router that lost it.
        hello.callMeBack(cb, "ring");
        if(!servant.waitFor("ring", 5000))
        {
            throw new StepFailed("twoway callback not received");
        }
        System.out.println("callback ring");

        // A oneway callback has no reply to wait for: it may arrive after callMeBackOneway
        // returns, or never if the router drops it.
        hello.callMeBackOneway(cb, "knock");
        if(!servant.waitFor("knock", 5000))
        {
            throw new StepFailed("oneway callback not received within 5 s");
        }
        System.out.println("oneway callback knock");

        router.destroySession();
        System.out.println("session destroyed");
    }

    public static void main(String[] args)
    {
        if(args.length != 4)
        {
            System.err.println("usage: Client ROUTER-PROXY HELLO-PROXY USER PASSWORD");
            System.exit(2);
        }
        int status = 0;
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        init.properties.setProperty("Ice.Default.Router", args[0]);
        init.properties.setProperty("Ice.Warn.Connections", "0");
        // Bounded like the Python and C++ clients, and no silent retries: a failure the
        // router causes must surface here.
        init.properties.setProperty("Ice.Default.InvocationTimeout", "5000");
        init.properties.setProperty("Ice.Override.ConnectTimeout", "3000");
        init.properties.setProperty("Ice.Override.CloseTimeout", "3000");
        init.properties.setProperty("Ice.RetryIntervals", "-1");
        try(Communicator ic = Util.initialize(init))
        {
            run(ic, args[1], args[2], args[3]);
        }
        catch(StepFailed e)
        {
            System.err.println("error: " + e.getMessage());
            status = 1;
        }
        catch(Exception e)
        {
            // The trace's first line is the exception's class and fields; the rest says which step.
            System.err.print("error: ");
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }
}
